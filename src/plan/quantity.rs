//! Kubernetes resource quantities (`64Gi`, `500m`, `1e3`), checked before they reach
//! a manifest the API server would reject.

/// Whether `text` is a quantity in the Kubernetes syntax (apimachinery
/// `resource.ParseQuantity`): a signed decimal number followed by an optional binary
/// suffix (Ki..Ei), decimal suffix (n, u, m, k, M..E) or exponent (e3, E-2).
pub fn is_quantity(text: &str) -> bool {
    let s = text.strip_prefix(['+', '-']).unwrap_or(text);
    let digits_end = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(digits_end);
    let dots = number.matches('.').count();
    if number.is_empty() || number == "." || dots > 1 {
        return false;
    }
    match suffix {
        "" | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" | "n" | "u" | "m" | "k" | "M" | "G" | "T"
        | "P" | "E" => true,
        _ => {
            let exp = suffix.strip_prefix(['e', 'E']);
            exp.is_some_and(|e| {
                let e = e.strip_prefix(['+', '-']).unwrap_or(e);
                !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
            })
        }
    }
}

/// The value of a quantity in base units (bytes, cores), or None when `text` is not a
/// quantity. f64 is exact enough to compare sizes; it is never written back.
pub fn value(text: &str) -> Option<f64> {
    if !is_quantity(text) {
        return None;
    }
    let number_end = text
        .find(|c: char| !c.is_ascii_digit() && !matches!(c, '.' | '+' | '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(number_end);
    let number: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        exp => 10f64.powi(exp[1..].parse::<i32>().ok()?.clamp(-400, 400)),
    };
    Some(number * scale)
}

#[cfg(test)]
mod tests {
    use super::{is_quantity, value};

    #[test]
    fn values() {
        assert_eq!(value("64Gi"), Some(64.0 * 1024.0 * 1024.0 * 1024.0));
        assert_eq!(value("500m"), Some(0.5));
        assert_eq!(value("1e3"), Some(1000.0));
        assert_eq!(value("-1Gi"), Some(-1024.0 * 1024.0 * 1024.0));
        assert_eq!(value("64"), Some(64.0));
        assert_eq!(value("2E-2"), Some(0.02));
        assert_eq!(value("1GB"), None);
    }

    #[test]
    fn accepts_kubernetes_quantities() {
        for q in [
            "64", "64Gi", "512Gi", "500m", "1.5", ".5", "1e3", "2E-2", "+1k", "100M",
        ] {
            assert!(is_quantity(q), "{q}");
        }
    }

    #[test]
    fn rejects_everything_else() {
        for q in [
            "", "Gi", "64 Gi", "512 GB", "1..2", "1GB", "e3", "1e", "abc", "1i",
        ] {
            assert!(!is_quantity(q), "{q}");
        }
    }
}
