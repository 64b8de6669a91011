//! Kubernetes resource quantities (`64Gi`, `500m`, `1e3`), checked before they reach
//! a manifest the API server would reject.

/// Whether `text` is a quantity in the Kubernetes syntax (apimachinery
/// `resource.ParseQuantity`): a signed decimal number followed by an optional binary
/// suffix (Ki..Ei), decimal suffix (n, u, m, k, M..E) or exponent (e3, E-2). Stricter
/// than the API server in three ways, on purpose: it reads a bare sign or dot ("-",
/// ".") as 0 and trims spaces around the text; here those are mistakes, refused.
/// tests/cli/control_plane.rs holds this against a real API server, those three pinned.
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

/// A quantity exactly as the API server holds it after `resource.ParseQuantity`
/// (apimachinery v0.33.3 pkg/api/resource/quantity.go L277-L390): no float, so
/// `1Gi` > `1G`, `500m` < `1` and `100.1` < `100.10000000000001` compare as Kubernetes
/// compares them. Ordered by value.
///
/// The value is `0.d1d2d3… × 10^exponent` with `digits` free of leading and trailing
/// zeros (empty for zero), so comparing two magnitudes is comparing their exponents,
/// then their digits. A written exponent of any size costs no memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exact {
    negative: bool,
    digits: Vec<u8>,
    exponent: i64,
}

/// Kubernetes caps a binary-suffixed amount here (quantity.go L371-L373, `maxAllowed`
/// is `(1<<63)-1`).
const BINARY_CAP: &str = "9223372036854775807";

impl Exact {
    /// `text` as ParseQuantity reads it, or None when it is not a quantity.
    pub fn parse(text: &str) -> Option<Exact> {
        if !is_quantity(text) {
            return None;
        }
        let (negative, unsigned) = match text.as_bytes()[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let number_end = unsigned
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(unsigned.len());
        let (number, suffix) = unsigned.split_at(number_end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        // suffix.go L180-L198: decimal SI, binary SI, or e/E and a 64-bit exponent
        // that Go then truncates to int32 (`int32(parsed)`), wrapping as Go does.
        let (decimal_exponent, binary_power) = match suffix {
            "" => (0, 0),
            "n" => (-9, 0),
            "u" => (-6, 0),
            "m" => (-3, 0),
            "k" => (3, 0),
            "M" => (6, 0),
            "G" => (9, 0),
            "T" => (12, 0),
            "P" => (15, 0),
            "E" => (18, 0),
            "Ki" => (0, 1),
            "Mi" => (0, 2),
            "Gi" => (0, 3),
            "Ti" => (0, 4),
            "Pi" => (0, 5),
            "Ei" => (0, 6),
            exp => (i64::from(exp[1..].parse::<i64>().ok()? as i32), 0),
        };
        let mut digits: Vec<u8> = whole
            .bytes()
            .chain(fraction.bytes())
            .map(|b| b - b'0')
            .collect();
        let mut exponent = whole.len() as i64 + decimal_exponent;
        // × 1024 per binary step (quantity.go L352-L356), growing digits to the left.
        for _ in 0..binary_power {
            let mut carry = 0u32;
            for d in digits.iter_mut().rev() {
                let v = u32::from(*d) * 1024 + carry;
                *d = (v % 10) as u8;
                carry = v / 10;
            }
            while carry > 0 {
                digits.insert(0, (carry % 10) as u8);
                carry /= 10;
                exponent += 1;
            }
        }
        let mut exact = Exact {
            negative,
            digits,
            exponent,
        };
        exact.normalize();
        exact.round_up_to_nano();
        if binary_power > 0 && !exact.negative {
            let cap = Exact::parse(BINARY_CAP).expect("the cap is a quantity");
            if exact > cap {
                exact = cap;
            }
        }
        Some(exact)
    }

    fn normalize(&mut self) {
        let leading = self.digits.iter().take_while(|&&d| d == 0).count();
        self.digits.drain(..leading);
        self.exponent -= leading as i64;
        while self.digits.last() == Some(&0) {
            self.digits.pop();
        }
        if self.digits.is_empty() {
            self.negative = false;
            self.exponent = 0;
        }
    }

    /// quantity.go L362-L369: a non-zero amount finer than 1n is rounded away from
    /// zero to a multiple of 1n ("if you want some resources, you should get some").
    fn round_up_to_nano(&mut self) {
        if self.digits.is_empty() {
            return;
        }
        // Digit i weighs 10^(exponent-1-i); 1n is 10^-9, so exponent+9 digits stay.
        let keep = self.exponent.saturating_add(9);
        if keep >= self.digits.len() as i64 {
            return;
        }
        if keep <= 0 {
            // All of it is below 1n: the amount becomes 1n.
            self.digits = vec![1];
            self.exponent = -8;
            return;
        }
        self.digits.truncate(keep as usize);
        self.add_one_at_last_digit();
        self.normalize();
    }

    fn add_one_at_last_digit(&mut self) {
        for d in self.digits.iter_mut().rev() {
            if *d == 9 {
                *d = 0;
            } else {
                *d += 1;
                return;
            }
        }
        self.digits.insert(0, 1);
        self.exponent += 1;
    }

    pub fn is_negative(&self) -> bool {
        self.negative
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// The digits after the decimal point, without the zeros that lead them when the
    /// amount is below 0.1 (`-exponent` of them); none trail.
    fn fraction(&self) -> &[u8] {
        let whole = self.exponent.clamp(0, self.digits.len() as i64) as usize;
        &self.digits[whole..]
    }

    /// Whether `MilliValue() % 1000 == 0` (validation.go L7411-L7419, the API
    /// server's test that an integer resource is whole). MilliValue is ceil(q × 1000)
    /// (quantity.go L817-L833), so a fraction above .999 rounds up to a whole number
    /// and passes, as it does on the API server; the magnitude is judged (a negative
    /// amount is an error of its own).
    pub fn is_whole_in_millis(&self) -> bool {
        let fraction = self.fraction();
        if fraction.is_empty() {
            return true;
        }
        // Position of the fraction's first digit after the point: 1 unless the
        // amount is below 0.1 (exponent < 0 puts -exponent zeros first).
        let zeros = (-self.exponent).max(0);
        if zeros >= 3 {
            // 0 < fraction < 0.001: ceil(1000 × fraction) is 1, not a multiple of 1000.
            return false;
        }
        let mut millis = [0u8; 3];
        let mut rest_nonzero = false;
        for (i, d) in fraction.iter().enumerate() {
            let at = i + zeros as usize;
            if at < 3 {
                millis[at] = *d;
            } else if *d != 0 {
                rest_nonzero = true;
            }
        }
        let millis = u32::from(millis[0]) * 100 + u32::from(millis[1]) * 10 + u32::from(millis[2]);
        let ceil = millis + u32::from(rest_nonzero);
        ceil == 0 || ceil == 1000
    }

    /// `Value()`, ceil(q) (quantity.go L813), when it fits an i128; None above.
    pub fn ceil_value(&self) -> Option<i128> {
        if self.digits.is_empty() {
            return Some(0);
        }
        if self.exponent > 38 {
            return None;
        }
        let whole = self.exponent.max(0) as usize;
        let mut value: i128 = 0;
        for i in 0..whole {
            value = value * 10 + i128::from(*self.digits.get(i).unwrap_or(&0));
        }
        let has_fraction = self.digits.len() > whole;
        Some(if self.negative {
            -value
        } else {
            value + i128::from(has_fraction)
        })
    }
}

impl Ord for Exact {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let sign = |e: &Exact| match (e.negative, e.digits.is_empty()) {
            (_, true) => 0,
            (true, _) => -1,
            (false, _) => 1,
        };
        match sign(self).cmp(&sign(other)) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        let magnitude = self
            .exponent
            .cmp(&other.exponent)
            .then_with(|| self.digits.cmp(&other.digits));
        if self.negative {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

impl PartialOrd for Exact {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::{Exact, is_quantity, value};

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

    fn exact(text: &str) -> Exact {
        Exact::parse(text).unwrap_or_else(|| panic!("{text} is a quantity"))
    }

    #[test]
    fn exact_comparison_is_the_api_servers() {
        use std::cmp::Ordering::*;
        for (a, b, order) in [
            ("500m", "1", Less),
            ("1Gi", "1G", Greater),
            ("1", "1.0", Equal),
            ("1", "1000m", Equal),
            ("0.5", "500m", Equal),
            ("1k", "1000", Equal),
            ("1Ki", "1024", Equal),
            ("1.5Gi", "1610612736", Equal),
            ("100", "8", Greater),
            ("8", "8", Equal),
            ("100.1", "100.10000000000001", Less),
            ("1e3", "1k", Equal),
            ("2E-2", "20m", Equal),
            ("-1", "0", Less),
            ("-2", "-1", Less),
            ("0", "-0", Equal),
            ("0", "0n", Equal),
            ("007", "7", Equal),
            ("1e400", "1e399", Greater),
            ("1e-400", "1n", Equal),                // rounded up to 1n
            ("1.0000000001", "1.000000001", Equal), // rounded up to 1n
            ("8Ei", "9223372036854775807", Equal),  // binary amounts are capped
            ("9e18", "8Ei", Less),
            ("1e4294967297", "10", Equal), // Go's int32(parsed) wraps the exponent
        ] {
            assert_eq!(exact(a).cmp(&exact(b)), order, "{a} vs {b}");
        }
        assert_eq!(Exact::parse("1GB"), None);
        assert!(exact("-1m").is_negative());
        assert!(exact("0.000").is_zero());
    }

    #[test]
    fn whole_in_millis_follows_milli_value() {
        for (text, whole) in [
            ("1", true),
            ("8", true),
            ("1000m", true),
            ("1k", true),
            ("0", true),
            ("0.5", false),
            ("500m", false),
            ("1.001", false),
            ("1.0001", false),    // ceil(1000.1) = 1001
            ("1.9995", true),     // ceil(1999.5) = 2000: the API server accepts it
            ("0.0000001", false), // ceil(0.0001) = 1
            ("1e-3", false),
            ("1Ki", true),
        ] {
            assert_eq!(exact(text).is_whole_in_millis(), whole, "{text}");
        }
    }

    #[test]
    fn ceil_value() {
        assert_eq!(exact("2Mi").ceil_value(), Some(2 * 1024 * 1024));
        assert_eq!(exact("1.5").ceil_value(), Some(2));
        assert_eq!(exact("100m").ceil_value(), Some(1));
        assert_eq!(exact("0").ceil_value(), Some(0));
        assert_eq!(exact("1e40").ceil_value(), None);
    }
}
