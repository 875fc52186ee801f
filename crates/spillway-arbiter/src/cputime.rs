//! Thread and process CPU time: what the arbiter (or a simulation's threads) spends,
//! whatever else shares the machine.

/// CPU time consumed by the calling thread, in seconds.
pub fn thread_cpu_seconds() -> f64 {
    cpu_seconds(3) // CLOCK_THREAD_CPUTIME_ID
}

/// CPU time consumed by every thread of this process, in seconds.
pub fn process_cpu_seconds() -> f64 {
    cpu_seconds(2) // CLOCK_PROCESS_CPUTIME_ID
}

fn cpu_seconds(clock: i32) -> f64 {
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct Timespec {
            sec: i64,
            nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clk: i32, tp: *mut Timespec) -> i32;
        }
        let mut t = Timespec { sec: 0, nsec: 0 };
        // SAFETY: clock_gettime writes one timespec to a valid pointer.
        let rc = unsafe { clock_gettime(clock, &mut t) };
        assert_eq!(rc, 0, "clock_gettime({clock})");
        t.sec as f64 + t.nsec as f64 * 1e-9
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = clock;
        use std::sync::OnceLock;
        use std::time::Instant;
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_secs_f64()
    }
}
