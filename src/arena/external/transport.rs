//! The engine's end of the line: its process (started on pipes, or an HTP engine client that
//! connects to tafl-lab over TCP), the thread that reads its lines so that a silent or flooding
//! engine cannot block the referee past its deadline, and the transcript of a game.

use super::{ExternalSpec, Protocol};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running child process whose protocol lines arrive on a channel: its stdout, or (an HTP
/// engine client) the TCP connection it opened to tafl-lab.
pub(super) struct Proc {
    pub(super) child: Child,
    link: Box<dyn Write + Send>,
    pub(super) lines: Receiver<String>,
    /// Where both directions are logged, when the spec asks for a transcript.
    transcript: Transcript,
    /// The last lines the child wrote to stderr (engine clients only).
    errors: Option<Arc<Mutex<VecDeque<String>>>>,
}

/// The transcript file of the current game, shared by the referee (lines sent) and the
/// reader thread (lines received); empty when no transcript is kept.
#[derive(Clone, Default)]
pub(super) struct Transcript(Arc<Mutex<Option<(std::fs::File, Instant)>>>);

impl Transcript {
    /// Starts a new file in `dir` for the next game (its name: protocol, process id, a counter).
    pub(super) fn begin(&self, dir: &Path, protocol: Protocol, header: &str) -> Result<(), String> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static GAMES: AtomicU32 = AtomicU32::new(0);
        let n = GAMES.fetch_add(1, Ordering::Relaxed);
        let name = format!("{}-{}-{n:04}.log", if protocol == Protocol::Htp { "htp" } else { "otep" }, std::process::id());
        std::fs::create_dir_all(dir).map_err(|e| format!("--engine-log {}: {e}", dir.display()))?;
        let path = dir.join(name);
        let mut f = std::fs::File::create(&path).map_err(|e| format!("--engine-log {}: {e}", path.display()))?;
        let _ = writeln!(f, "# {header}");
        *self.0.lock().expect("transcript lock") = Some((f, Instant::now()));
        Ok(())
    }

    fn write(&self, dir: &str, line: &str) {
        if let Some((f, t0)) = self.0.lock().expect("transcript lock").as_mut() {
            let _ = writeln!(f, "{:9.3} {dir} {line}", t0.elapsed().as_secs_f64());
        }
    }
}

/// Reads `input` line by line on a thread of its own, onto the returned channel (and into
/// `transcript` as `< ` lines).
fn read_lines(input: impl Read + Send + 'static, transcript: Transcript) -> Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(input);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    // A line longer than any protocol line is garbage; keep its start.
                    buf.truncate(4096);
                    let line = String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']).to_string();
                    transcript.write("<", &line);
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    lines
}

impl Proc {
    pub(super) fn spawn(cmd: &Path, args: &[String], transcript: Transcript) -> Result<Proc, String> {
        let mut child = Command::new(cmd)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", cmd.display()))?;
        let stdin = child.stdin.take().expect("piped");
        let lines = read_lines(child.stdout.take().expect("piped"), transcript.clone());
        Ok(Proc { child, link: Box::new(stdin), lines, transcript, errors: None })
    }

    /// Starts an HTP engine client with `--host ADDR` and waits until `deadline` for it to
    /// connect to `ADDR:49152`, a loopback address no other game of this machine listens on.
    pub(super) fn connect(cmd: &Path, args: &[String], deadline: Instant, transcript: Transcript) -> Result<Proc, String> {
        let (listener, ip) = listen_on_loopback()?;
        let mut child = Command::new(cmd)
            .args(args)
            .arg("--host")
            .arg(ip.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", cmd.display()))?;
        // Its stderr, kept to the last lines: a client that refuses a move says why there.
        let errors = Arc::new(Mutex::new(VecDeque::new()));
        let err_lines = read_lines(child.stderr.take().expect("piped"), Transcript::default());
        let keep = errors.clone();
        std::thread::spawn(move || {
            for l in err_lines {
                let mut q = keep.lock().expect("stderr buffer");
                if q.len() == 20 {
                    q.pop_front();
                }
                q.push_back(l);
            }
        });
        listener.set_nonblocking(true).map_err(|e| format!("listening on {ip}: {e}"))?;
        let stream = loop {
            match listener.accept() {
                Ok((stream, _)) => break stream,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(format!("listening on {ip}: {e}")),
            }
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("the engine exited ({status}) before it connected to {ip}:{}", ExternalSpec::HTP_CLIENT_PORT));
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("it did not connect to {ip}:{} in time", ExternalSpec::HTP_CLIENT_PORT));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let io_err = |e: std::io::Error| format!("connection from the engine: {e}");
        stream.set_nonblocking(false).map_err(io_err)?;
        let lines = read_lines(stream.try_clone().map_err(io_err)?, transcript.clone());
        Ok(Proc { child, link: Box::new(stream), lines, transcript, errors: Some(errors) })
    }

    pub(super) fn send(&mut self, line: &str) -> Result<(), TransportError> {
        self.transcript.write(">", line);
        writeln!(self.link, "{line}").and_then(|_| self.link.flush()).map_err(|_| TransportError::Exited(String::new()))
    }

    /// The next line before `deadline`.
    pub(super) fn recv(&mut self, deadline: Instant) -> Result<String, TransportError> {
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(wait) {
            Ok(l) => Ok(l),
            Err(RecvTimeoutError::Timeout) => Err(TransportError::Timeout),
            Err(RecvTimeoutError::Disconnected) => {
                // Give the process a moment to be reaped, so that its status can be told.
                let mut status = None;
                for _ in 0..50 {
                    status = self.child.try_wait().ok().flatten();
                    if status.is_some() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(TransportError::Exited(status.map(|s| format!(" ({s})")).unwrap_or_default()))
            }
        }
    }

    /// The last line the child wrote to stderr that starts with `prefix`, if any.
    pub(super) fn stderr_line(&self, prefix: &str) -> Option<String> {
        let q = self.errors.as_ref()?.lock().ok()?;
        q.iter().rev().find(|l| l.starts_with(prefix)).cloned()
    }
}

/// Why talking to an engine failed: code acts on the kind (a timeout is a loss on time, an
/// exit a crash), never on the message's words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// No line before the deadline.
    #[error("no answer in time")]
    Timeout,
    /// The engine's end of the pipe or connection closed; the text is its exit status, as
    /// ` (exit status: 3)`, when it could be read.
    #[error("the engine exited{0}")]
    Exited(String),
}

impl TransportError {
    /// The forfeit this failure is, when it happens while the engine owes an answer.
    pub fn cause(&self) -> super::ForfeitCause {
        match self {
            TransportError::Timeout => super::ForfeitCause::Time,
            TransportError::Exited(_) => super::ForfeitCause::Crash,
        }
    }
}

/// A listener on port 49152 of a loopback address nothing else here listens on: all of
/// 127.0.0.0/8 reaches this machine, so each game can have an address of its own.
fn listen_on_loopback() -> Result<(TcpListener, Ipv4Addr), String> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Start from the process id, so that separate tafl-lab processes try different ones.
    let base = std::process::id().wrapping_mul(7919);
    let mut last = None;
    for _ in 0..64 {
        let n = base.wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed)) % (250 * 250);
        let ip = Ipv4Addr::new(127, 1 + (n / 250) as u8, (n % 250) as u8, 1);
        match TcpListener::bind((ip, ExternalSpec::HTP_CLIENT_PORT)) {
            Ok(l) => return Ok((l, ip)),
            Err(e) => last = Some(e),
        }
    }
    Err(format!("no free loopback address to listen on port {}: {}", ExternalSpec::HTP_CLIENT_PORT, last.map(|e| e.to_string()).unwrap_or_default()))
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
