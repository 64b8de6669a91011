//! stdout and stderr as commands write to them: a closed pipe is a normal end.

use std::cell::Cell;
use std::io::{self, ErrorKind, Write};

/// One of the process's output streams.
///
/// Rust ignores SIGPIPE, so a reader that stops reading (`rdmagen lint x | head -1`)
/// shows up as `Err(BrokenPipe)` from a write instead of killing the process. That is
/// the end of the output, not a failure: from then on the stream drops what it is
/// given, and when it is stdout, stderr does too, so nothing more is printed (no
/// "Broken pipe"). The command still reaches its verdict and the run ends with the
/// exit code it would have had: unlike ripgrep, which exits 0 there, rdmagen's code
/// is a verdict (findings, differences) that a `pipefail` pipeline should see however
/// much of the output its reader wanted. A closed stderr silences only stderr, so the
/// manifests on stdout are never cut short by it. Every other error is returned.
pub struct StdStream<'a> {
    inner: &'a mut dyn Write,
    /// This stream's reader has gone.
    gone: bool,
    /// stdout's reader has gone: set by stdout's stream, read by both.
    stdout_gone: &'a Cell<bool>,
    is_stdout: bool,
}

impl<'a> StdStream<'a> {
    pub fn stdout(inner: &'a mut dyn Write, stdout_gone: &'a Cell<bool>) -> Self {
        StdStream {
            inner,
            gone: false,
            stdout_gone,
            is_stdout: true,
        }
    }

    pub fn stderr(inner: &'a mut dyn Write, stdout_gone: &'a Cell<bool>) -> Self {
        StdStream {
            is_stdout: false,
            ..StdStream::stdout(inner, stdout_gone)
        }
    }

    fn dropping(&self) -> bool {
        self.gone || self.stdout_gone.get()
    }

    /// `result`, unless it says the reader has gone: then nothing is left to do.
    fn unless_gone<T>(&mut self, result: io::Result<T>, done: T) -> io::Result<T> {
        match result {
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {
                self.gone = true;
                if self.is_stdout {
                    self.stdout_gone.set(true);
                }
                Ok(done)
            }
            other => other,
        }
    }
}

impl Write for StdStream<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.dropping() {
            return Ok(buf.len());
        }
        let result = self.inner.write(buf);
        self.unless_gone(result, buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if self.dropping() {
            return Ok(());
        }
        let result = self.inner.write_all(buf);
        self.unless_gone(result, ())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.dropping() {
            return Ok(());
        }
        let result = self.inner.flush();
        self.unless_gone(result, ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `room` bytes, then says its reader has gone.
    struct Pipe {
        taken: Vec<u8>,
        room: usize,
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.taken.len() >= self.room {
                return Err(ErrorKind::BrokenPipe.into());
            }
            let n = buf.len().min(self.room - self.taken.len());
            self.taken.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_stdout_silences_both_streams_and_is_no_error() {
        let gone = Cell::new(false);
        let mut out_pipe = Pipe {
            taken: Vec::new(),
            room: 4,
        };
        let mut err_buf = Vec::new();
        {
            let mut out = StdStream::stdout(&mut out_pipe, &gone);
            let mut err = StdStream::stderr(&mut err_buf, &gone);
            writeln!(err, "before").unwrap();
            writeln!(out, "one line too long").unwrap();
            writeln!(out, "more").unwrap();
            writeln!(err, "after").unwrap();
            out.flush().unwrap();
        }
        assert_eq!(out_pipe.taken, b"one ");
        assert_eq!(err_buf, b"before\n");
    }

    #[test]
    fn a_closed_stderr_leaves_stdout_alone() {
        let gone = Cell::new(false);
        let mut err_pipe = Pipe {
            taken: Vec::new(),
            room: 0,
        };
        let mut out_buf = Vec::new();
        {
            let mut err = StdStream::stderr(&mut err_pipe, &gone);
            let mut out = StdStream::stdout(&mut out_buf, &gone);
            writeln!(err, "lost").unwrap();
            writeln!(out, "kept").unwrap();
        }
        assert_eq!(out_buf, b"kept\n");
    }

    #[test]
    fn other_errors_are_returned() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::from_raw_os_error(28))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let gone = Cell::new(false);
        let mut full = Full;
        let mut out = StdStream::stdout(&mut full, &gone);
        assert!(writeln!(out, "x").is_err());
    }
}
