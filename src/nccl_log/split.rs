//! Lines from a stream, in bounded memory: a line is kept up to [`MAX_LINE_BYTES`]
//! and the rest of it skipped; bytes that are not UTF-8 become U+FFFD (pod logs
//! carry binary noise, and a log is read for what it says, not rejected for it).

use std::io::{self, BufRead};

/// The most of one line that is looked at. NCCL builds its lines in 1-4 KiB buffers
/// (N@v2.30.7-1:src/debug.cc, `char buffer[1024]`; device lists in 2 KiB), so 64 KiB
/// holds any line NCCL, nccl-tests or perftest prints, padding included.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// What a read saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct Read {
    pub bytes: u64,
    pub lines: usize,
    /// Lines longer than [`MAX_LINE_BYTES`], cut there.
    pub cut: usize,
}

/// Call `each(number, line)` for every line of `input` (1-based numbers, line breaks
/// and a `\r` before them removed). `limit(bytes so far)` may stop the read with an
/// error (the size limit); nothing more is read after it.
pub fn lines(
    mut input: impl BufRead,
    mut limit: impl FnMut(u64) -> io::Result<()>,
    mut each: impl FnMut(usize, &str),
) -> io::Result<Read> {
    let mut read = Read::default();
    let mut line: Vec<u8> = Vec::with_capacity(1024);
    let mut cut = false;
    let mut pending = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            break;
        }
        let (taken, end) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, Some(at)),
            None => (chunk.len(), None),
        };
        let body = &chunk[..end.unwrap_or(taken)];
        let room = MAX_LINE_BYTES.saturating_sub(line.len());
        if body.len() > room {
            cut = true;
        }
        line.extend_from_slice(&body[..body.len().min(room)]);
        pending = true;
        input.consume(taken);
        read.bytes += taken as u64;
        limit(read.bytes)?;
        if end.is_some() {
            emit(&mut read, &mut line, &mut cut, &mut each);
            pending = false;
        }
    }
    if pending {
        emit(&mut read, &mut line, &mut cut, &mut each);
    }
    Ok(read)
}

fn emit(read: &mut Read, line: &mut Vec<u8>, cut: &mut bool, each: &mut impl FnMut(usize, &str)) {
    read.lines += 1;
    if *cut {
        read.cut += 1;
        *cut = false;
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    each(read.lines, &String::from_utf8_lossy(line));
    line.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(input: &[u8]) -> (Vec<(usize, String)>, Read) {
        let mut out = Vec::new();
        let read = lines(input, |_| Ok(()), |n, l| out.push((n, l.to_owned()))).unwrap();
        (out, read)
    }

    #[test]
    fn lines_breaks_and_last_line() {
        let (out, read) = collect(b"a\r\nb\n\nc");
        let texts: Vec<&str> = out.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(texts, ["a", "b", "", "c"]);
        assert_eq!(read.lines, 4);
        assert_eq!(read.bytes, 7);
        assert_eq!(collect(b"").0.len(), 0);
        assert_eq!(collect(b"x\n").0.len(), 1);
    }

    #[test]
    fn long_lines_are_cut_and_counted() {
        let mut input = vec![b'x'; MAX_LINE_BYTES * 3];
        input.extend_from_slice(b"\nnext\n");
        let (out, read) = collect(&input);
        assert_eq!(out[0].1.len(), MAX_LINE_BYTES);
        assert_eq!(out[1], (2, "next".to_owned()));
        assert_eq!(read.cut, 1);
    }

    #[test]
    fn bytes_that_are_not_utf8_become_replacement_characters() {
        let (out, _) = collect(b"ok \xff\xfe end\n");
        assert_eq!(out[0].1, "ok \u{fffd}\u{fffd} end");
    }

    #[test]
    fn the_limit_stops_the_read() {
        let err = lines(
            &b"aaaa\nbbbb\n"[..],
            |n| {
                if n > 5 {
                    Err(io::Error::other("too big"))
                } else {
                    Ok(())
                }
            },
            |_, _| {},
        );
        assert!(err.is_err());
    }
}
