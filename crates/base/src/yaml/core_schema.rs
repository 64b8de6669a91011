//! The YAML 1.2 core schema (spec §10.3): how a plain scalar resolves to null, a
//! boolean, a number or a string, and how a key becomes a JSON object key. Shared by
//! the located tree and the fast reader, so both type every scalar the same way.

use serde_json::{Number, Value};

/// A mapping key as a JSON object key: strings as they are, other scalars as their
/// JSON text (`1` → "1", `~` → "null"), as Kubernetes' YAML-to-JSON conversion does.
pub fn key_string(key: Value) -> String {
    match key {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// The YAML 1.2 core schema's resolution of a plain scalar (spec §10.3.2).
pub fn plain_scalar(text: &str) -> Value {
    // Most plain scalars are words: only these first bytes can start anything else.
    match text.as_bytes().first() {
        Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'~' | b't' | b'T' | b'f' | b'F' | b'n' | b'N')
        | None => {}
        Some(_) => return Value::String(text.to_owned()),
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Some(n) = integer(text) {
        return Value::Number(n);
    }
    if is_float(text)
        && let Some(n) = text.parse::<f64>().ok().and_then(Number::from_f64)
    {
        return Value::Number(n);
    }
    Value::String(text.to_owned())
}

fn integer(text: &str) -> Option<Number> {
    let (negative, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let value = if let Some(oct) = text.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()?
    } else if let Some(hex) = text.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        // Every integer JSON holds exactly, as a JSON decoder reads it: up to u64's
        // top, down to i64's bottom (beyond either, a float). Reading 2^63 as a float
        // would make it a different number from the one rdmagen wrote.
        let v: u64 = digits.parse().ok()?;
        if !negative {
            return Some(Number::from(v));
        }
        i64::try_from(-i128::from(v)).ok()?
    } else {
        return None;
    };
    Some(Number::from(value))
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_float(text: &str) -> bool {
    let s = text.strip_prefix(['-', '+']).unwrap_or(text);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |d: &str| d.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match frac {
        Some(f) => digits(int) && digits(f) && !(int.is_empty() && f.is_empty()),
        None => !int.is_empty() && digits(int),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::plain_scalar;
    use serde_json::json;

    #[test]
    fn core_schema() {
        assert_eq!(plain_scalar("8"), json!(8));
        assert_eq!(plain_scalar("-3"), json!(-3));
        assert_eq!(plain_scalar("0x1F"), json!(31));
        assert_eq!(plain_scalar("1.5"), json!(1.5));
        assert_eq!(plain_scalar("1e3"), json!(1000.0));
        assert_eq!(plain_scalar("true"), json!(true));
        assert_eq!(plain_scalar("~"), json!(null));
        for s in [
            "no", "on", "yes", "off", "64Gi", "1.2.3", "e3", ".", "0o9", "mlx5_1",
        ] {
            assert_eq!(plain_scalar(s), json!(s), "{s}");
        }
    }
}
