//! The process's logs at `debug`, kept in memory so a test can check what they never say (a
//! token). Installed as the global subscriber: each test runs in its own process under nextest;
//! where another subscriber is already set, the capture stays empty and says so.

use std::io::Write;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
pub struct LogCapture {
    lines: Arc<Mutex<Vec<u8>>>,
    installed: bool,
}

impl LogCapture {
    pub fn install() -> Self {
        let mut capture = LogCapture::default();
        let writer = capture.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new("debug"))
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        capture.installed = tracing::subscriber::set_global_default(subscriber).is_ok();
        capture
    }

    /// Everything logged so far (a note when the capture could not be installed).
    pub fn text(&self) -> String {
        if !self.installed {
            return "(logs not captured: another subscriber was set)".to_owned();
        }
        String::from_utf8_lossy(&self.lines.lock().unwrap()).into_owned()
    }
}

impl Write for LogCapture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.lines.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
