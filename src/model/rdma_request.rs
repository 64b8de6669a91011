//! The job's `rdma` field: `auto`, `on`, `off`, or CubeStudio's plain count `N` and
//! typed `N(type)`.

use crate::model::pool::Fabric;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RdmaRequest {
    Auto,
    On,
    Off,
    /// CubeStudio's plain count `N` (N ≥ 1): N devices of the default resource. `0` is
    /// read as Off.
    Count(u32),
    /// CubeStudio's `N(type)`: N devices of the resource named after `type`.
    Typed {
        count: u32,
        fabric: Fabric,
    },
}

/// Why an `rdma` value could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum RdmaRequestError {
    /// `N(x)` where x is not roce or ib.
    UnknownType(String),
    /// Anything else.
    Malformed,
}

impl RdmaRequest {
    /// Parse the value as CubeStudio's get_rdma() reads it (myapp/utils/core.py:
    /// 1655-1688): a plain count (its UI's examples are `0`, `1`, `10`), or a count then
    /// a type in ASCII or full-width parentheses. Unlike get_rdma(), which returns 0
    /// for what it cannot read and the default resource for a type it does not know,
    /// every failure is an error here.
    pub fn parse(text: &str) -> Result<Self, RdmaRequestError> {
        let text = text.trim();
        match text {
            "auto" => return Ok(RdmaRequest::Auto),
            "on" => return Ok(RdmaRequest::On),
            "off" => return Ok(RdmaRequest::Off),
            _ => {}
        }
        if !text.is_empty() && text.len() <= 9 && text.bytes().all(|b| b.is_ascii_digit()) {
            let count: u32 = text.parse().map_err(|_| RdmaRequestError::Malformed)?;
            return Ok(if count == 0 {
                RdmaRequest::Off
            } else {
                RdmaRequest::Count(count)
            });
        }
        let normalised = text.replace('（', "(").replace('）', ")");
        let (count, rest) = normalised
            .split_once('(')
            .ok_or(RdmaRequestError::Malformed)?;
        let kind = rest
            .strip_suffix(')')
            .ok_or(RdmaRequestError::Malformed)?
            .trim();
        let count: u32 = count
            .trim()
            .parse()
            .map_err(|_| RdmaRequestError::Malformed)?;
        if count == 0 {
            return Err(RdmaRequestError::Malformed);
        }
        let fabric = match kind.to_ascii_lowercase().as_str() {
            "roce" => Fabric::Roce,
            "ib" => Fabric::Ib,
            _ => return Err(RdmaRequestError::UnknownType(kind.to_owned())),
        };
        Ok(RdmaRequest::Typed { count, fabric })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_and_cubestudio_forms() {
        assert_eq!(RdmaRequest::parse("auto"), Ok(RdmaRequest::Auto));
        assert_eq!(RdmaRequest::parse(" on "), Ok(RdmaRequest::On));
        assert_eq!(RdmaRequest::parse("off"), Ok(RdmaRequest::Off));
        assert_eq!(RdmaRequest::parse("0"), Ok(RdmaRequest::Off));
        assert_eq!(RdmaRequest::parse("1"), Ok(RdmaRequest::Count(1)));
        assert_eq!(RdmaRequest::parse("10"), Ok(RdmaRequest::Count(10)));
        assert_eq!(
            RdmaRequest::parse("1(roce)"),
            Ok(RdmaRequest::Typed {
                count: 1,
                fabric: Fabric::Roce
            })
        );
        assert_eq!(
            RdmaRequest::parse("2（IB）"),
            Ok(RdmaRequest::Typed {
                count: 2,
                fabric: Fabric::Ib
            })
        );
    }

    #[test]
    fn unknown_types_and_garbage_are_errors() {
        assert_eq!(
            RdmaRequest::parse("1(iwarp)"),
            Err(RdmaRequestError::UnknownType("iwarp".into()))
        );
        for bad in [
            "",
            "yes",
            "0(roce)",
            "x(roce)",
            "1(roce",
            "1roce)",
            "-1(ib)",
            "-1",
            "1.5",
            "99999999999",
        ] {
            assert_eq!(
                RdmaRequest::parse(bad),
                Err(RdmaRequestError::Malformed),
                "{bad}"
            );
        }
    }
}
