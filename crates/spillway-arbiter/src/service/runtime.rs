//! The loop both daemons run: one UDP socket, a receive thread and a timer thread around
//! one state machine under a mutex.
//!
//! Why two threads and not one busy-polling loop: on a machine shared with other work
//! (CI on two cores, ten processes in the demo) spinning processes starve each other
//! and every timeslot is missed. The receive thread blocks in `recv_from` and is woken by
//! the kernel when a datagram arrives; the timer thread sleeps on a condition variable
//! until the next deadline (a futex wait: an hrtimer, precise to the thread's timer
//! slack, which [`super::clock::lower_timer_slack`] lowers to 1 us; `SO_RCVTIMEO`, by
//! contrast, counts in jiffies). A datagram that moves the deadline earlier wakes it.
//! `busy_poll` makes the timer thread spin instead, as the paper's DPDK arbiter polls
//! (§6.2): for a machine with a core to spare.

use super::clock::{self, Clock, Lateness};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// A daemon's state machine, driven by [`run`]. Times are picoseconds since the origin.
pub trait Service: Send {
    fn on_datagram(&mut self, now: u64, bytes: &[u8], from: SocketAddr, sock: &UdpSocket);
    /// Fire what is due at `now`.
    fn on_timer(&mut self, now: u64, sock: &UdpSocket);
    /// When [`Service::on_timer`] should run next.
    fn next_deadline(&self) -> u64;
    /// Where the loop records how late its timers fired.
    fn lateness(&mut self) -> &mut Lateness;
    /// True once the service wants to exit (e.g. a stop query).
    fn stopping(&self) -> bool {
        false
    }
}

#[derive(Clone, Copy, Debug)]
pub struct RunOpts {
    pub busy_poll: bool,
    /// Stop at this time (ps since the origin).
    pub until: Option<u64>,
}

/// The longest the timer thread sleeps without looking at the stop flags.
const MAX_WAIT: Duration = Duration::from_millis(20);
/// The receive thread's read timeout: how soon it sees the stop flag.
const RX_POLL: Duration = Duration::from_millis(20);

fn lock<S>(m: &Mutex<S>) -> MutexGuard<'_, S> {
    // A panic while holding the lock is a bug already reported; keep serving regardless.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run `svc` on `sock` until SIGTERM/SIGINT, a stop query, or `opts.until`.
pub fn run<S: Service>(
    svc: S,
    sock: &UdpSocket,
    clock: Clock,
    opts: RunOpts,
) -> std::io::Result<S> {
    let state = Mutex::new(svc);
    let cv = Condvar::new();
    let done = AtomicBool::new(false);
    let rx_sock = sock.try_clone()?;
    rx_sock.set_read_timeout(Some(RX_POLL))?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // Largest UDP payload: a datagram is read whole, whatever its size, and then
            // judged (FCP's largest is 1226 bytes).
            let mut buf = vec![0u8; 65536];
            while !done.load(Ordering::Relaxed) {
                match rx_sock.recv_from(&mut buf) {
                    Ok((n, from)) => {
                        let now = clock.now();
                        let mut g = lock(&state);
                        let before = g.next_deadline();
                        g.on_datagram(now, &buf[..n], from, &rx_sock);
                        if g.next_deadline() < before || g.stopping() {
                            cv.notify_one();
                        }
                    }
                    // Timeouts, and errors an unconnected UDP socket may report (an
                    // ICMP error of an earlier send): nothing to do but go on.
                    Err(_) => continue,
                }
            }
        });
        clock::lower_timer_slack();
        let mut g = lock(&state);
        let mut waited = false;
        loop {
            let now = clock.now();
            if clock::stop_requested() || g.stopping() || opts.until.is_some_and(|u| now >= u) {
                break;
            }
            let dl = g.next_deadline();
            if now >= dl {
                if waited {
                    g.lateness().record(now - dl);
                    waited = false;
                }
                g.on_timer(now, sock);
                continue;
            }
            waited = true;
            let wait = clock::ps_duration(dl - now).min(MAX_WAIT);
            if opts.busy_poll {
                drop(g);
                // Short spins, so that a datagram moving the deadline earlier is seen.
                let end = std::time::Instant::now() + wait.min(Duration::from_micros(10));
                while std::time::Instant::now() < end && !clock::stop_requested() {
                    std::hint::spin_loop();
                }
                g = lock(&state);
            } else {
                g = cv
                    .wait_timeout(g, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
        drop(g);
        done.store(true, Ordering::Relaxed);
    });
    Ok(state.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// Whether `from` may send control queries (status, stop): loopback only.
pub fn control_allowed(from: &SocketAddr) -> bool {
    from.ip().is_loopback()
}
