//! GID values as show_gids and `ibv_devinfo -v` print them.

/// The IPv4 address of an IPv4-mapped GID (`::ffff:a.b.c.d`), in either spelling:
/// `0000:0000:0000:0000:0000:ffff:0b00:0048` (show_gids, sysfs) or `::ffff:11.0.0.72`.
pub fn ipv4(gid: &str) -> Option<String> {
    let gid = gid.trim().to_ascii_lowercase();
    if let Some(dotted) = gid.strip_prefix("::ffff:") {
        let ok =
            dotted.split('.').count() == 4 && dotted.split('.').all(|o| o.parse::<u8>().is_ok());
        return ok.then(|| dotted.to_owned());
    }
    let groups: Vec<&str> = gid.split(':').collect();
    if groups.len() != 8
        || groups[..5]
            .iter()
            .any(|g| !g.trim_start_matches('0').is_empty())
        || groups[5] != "ffff"
    {
        return None;
    }
    let hi = u16::from_str_radix(groups[6], 16).ok()?;
    let lo = u16::from_str_radix(groups[7], 16).ok()?;
    Some(format!(
        "{}.{}.{}.{}",
        hi >> 8,
        hi & 0xff,
        lo >> 8,
        lo & 0xff
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_addresses() {
        assert_eq!(
            ipv4("0000:0000:0000:0000:0000:ffff:0b00:0048").as_deref(),
            Some("11.0.0.72")
        );
        assert_eq!(ipv4("::ffff:10.0.60.3").as_deref(), Some("10.0.60.3"));
        assert_eq!(ipv4("fe80:0000:0000:0000:a288:c2ff:fe5b:03ec"), None);
        assert_eq!(ipv4("::ffff:300.1.1.1"), None);
    }
}
