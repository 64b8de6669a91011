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

#[cfg(test)]
mod tests {
    use super::is_quantity;

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
