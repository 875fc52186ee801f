//! Units as the papers write them, converted once and exactly to integers.
//!
//! - sizes: `B`, `KB`/`KiB` (1024), `MB`/`MiB` (1024²), `GB`/`GiB` (1024³). DeTail §6.1
//!   computes 128 KB = 131,072 B, so `KB` is binary here, as in every paper we follow.
//! - rates: decimal, `bps`, `Kbps`, `Mbps`, `Gbps`, `Tbps` (`10Gbps` = 1e10 bit/s).
//! - times: `ps`, `ns`, `us`, `ms`, `s`, held as `u64` picoseconds.

/// Simulated time: integer picoseconds.
pub type Ps = u64;

pub const PS_PER_NS: Ps = 1_000;
pub const PS_PER_US: Ps = 1_000_000;
pub const PS_PER_MS: Ps = 1_000_000_000;
pub const PS_PER_S: Ps = 1_000_000_000_000;

// Limits that keep every run's arithmetic inside `u64` picoseconds (about 213 days).
// Any one time a scenario gives is at most `MAX_TIME`, every offset the simulator adds
// to the clock (a delay, a timeout, a serialization, a FastLane cap) is then below 2^60,
// and the clock itself stops at `HORIZON`: so `now + offset` never wraps.

/// The longest time a scenario may give (any time key, a trace flow's start): one day.
pub const MAX_TIME: Ps = 86_400 * PS_PER_S;
/// Simulated time never passes 2^62 ps (about 53 days): a run that reaches it stops.
pub const HORIZON: Ps = 1 << 62;
/// Link rates: 1 Kbps to 100 Tbps (a frame then takes at most 73 s, and at least 1 ps).
pub const MIN_RATE: u64 = 1_000;
pub const MAX_RATE: u64 = 100_000_000_000_000;
/// The largest size a scenario may give (buffers, flows, CDF points): 1024 GB.
pub const MAX_SIZE: u64 = 1 << 40;

/// `v` if it is within the size limit.
pub fn check_size(v: u64) -> Result<u64, String> {
    if v > MAX_SIZE {
        return Err(format!(
            "{v} B is more than 1024GB (2^40 B), the largest size a scenario may give"
        ));
    }
    Ok(v)
}

/// `v` bit/s if it is within the rate limits.
pub fn check_rate(v: u64) -> Result<u64, String> {
    if !(MIN_RATE..=MAX_RATE).contains(&v) {
        return Err(format!(
            "{} is outside the rates a scenario may give (1Kbps to 100Tbps)",
            format_rate(v)
        ));
    }
    Ok(v)
}

/// `v` ps if it is within the time limit.
pub fn check_time(v: Ps) -> Result<Ps, String> {
    if v > MAX_TIME {
        return Err(format!(
            "{} is longer than 1 day (86400s), the longest time a scenario may give",
            format_time(v)
        ));
    }
    Ok(v)
}

/// Splits "12.5Gbps" into ("12.5", "Gbps"); whitespace between is allowed.
fn split_number(text: &str) -> Option<(&str, &str)> {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_' || c == 'e' || c == 'E'))
        .unwrap_or(t.len());
    // An 'e' directly followed by a letter is a unit, not an exponent (none of ours starts with e).
    let (num, unit) = t.split_at(end);
    if num.is_empty() {
        return None;
    }
    Some((num, unit.trim()))
}

/// Multiplies a decimal number given as text by an integer scale, exactly when the
/// result is whole. Avoids float rounding for the common cases ("0.2us", "2.5Gbps").
fn scaled(num: &str, scale: u128) -> Result<u64, String> {
    let num = num.replace('_', "");
    if num.contains(['e', 'E']) {
        let v: f64 = num
            .parse()
            .map_err(|_| format!("'{num}' is not a number"))?;
        let r = v * scale as f64;
        if !(r.is_finite() && r >= 0.0 && r < u64::MAX as f64) {
            return Err(format!("'{num}' is out of range"));
        }
        return Ok(r.round() as u64);
    }
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err("empty number".into());
    }
    let digits = format!("{int_part}{frac_part}");
    if !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("'{num}' is not a number"));
    }
    let mantissa: u128 = digits
        .parse()
        .map_err(|_| format!("'{num}' is too large"))?;
    let denom = 10u128
        .checked_pow(frac_part.len() as u32)
        .ok_or("too many decimals")?;
    let total = mantissa.checked_mul(scale).ok_or("too large")?;
    if total % denom != 0 {
        return Err(format!(
            "'{num}' is finer than the unit allows (must be a whole number of the base unit)"
        ));
    }
    u64::try_from(total / denom).map_err(|_| "too large".to_string())
}

/// Parses a byte size: `128KB`, `1460`, `1.5MB`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (num, unit) = split_number(text).ok_or_else(|| format!("'{text}' is not a size"))?;
    let scale: u128 = match unit {
        "" | "B" => 1,
        "KB" | "KiB" | "kB" => 1 << 10,
        "MB" | "MiB" => 1 << 20,
        "GB" | "GiB" => 1 << 30,
        _ => {
            return Err(format!(
                "'{text}': unknown size unit '{unit}' (use B, KB, MB, GB)"
            ))
        }
    };
    check_size(scaled(num, scale)?)
}

/// Parses a rate in bit/s: `10Gbps`, `40Gbps`, `100Mbps`.
pub fn parse_rate(text: &str) -> Result<u64, String> {
    let (num, unit) = split_number(text).ok_or_else(|| format!("'{text}' is not a rate"))?;
    let scale: u128 = match unit {
        "bps" => 1,
        "Kbps" | "kbps" => 1_000,
        "Mbps" => 1_000_000,
        "Gbps" => 1_000_000_000,
        "Tbps" => 1_000_000_000_000,
        _ => {
            return Err(format!(
                "'{text}': unknown rate unit '{unit}' (use bps, Kbps, Mbps, Gbps, Tbps)"
            ))
        }
    };
    let v = scaled(num, scale)?;
    if v == 0 {
        return Err(format!("'{text}': a rate must be positive"));
    }
    check_rate(v)
}

/// Parses a duration into picoseconds: `1us`, `0.2us`, `10ms`.
pub fn parse_time(text: &str) -> Result<Ps, String> {
    let (num, unit) = split_number(text).ok_or_else(|| format!("'{text}' is not a time"))?;
    let scale: u128 = match unit {
        "ps" => 1,
        "ns" => PS_PER_NS as u128,
        "us" | "µs" => PS_PER_US as u128,
        "ms" => PS_PER_MS as u128,
        "s" => PS_PER_S as u128,
        "" => return Err(format!("'{text}': a time needs a unit (ps, ns, us, ms, s)")),
        _ => {
            return Err(format!(
                "'{text}': unknown time unit '{unit}' (use ps, ns, us, ms, s)"
            ))
        }
    };
    check_time(scaled(num, scale)?)
}

/// The largest unit that divides `v` exactly, so resolved scenarios stay readable.
fn format_exact(v: u64, units: &[(&str, u64)]) -> String {
    for &(name, scale) in units {
        if v >= scale && v.is_multiple_of(scale) {
            return format!("{}{}", v / scale, name);
        }
    }
    let (name, _) = units[units.len() - 1];
    format!("{v}{name}")
}

pub fn format_size(bytes: u64) -> String {
    format_exact(
        bytes,
        &[("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)],
    )
}

pub fn format_rate(bps: u64) -> String {
    format_exact(
        bps,
        &[
            ("Tbps", 1_000_000_000_000),
            ("Gbps", 1_000_000_000),
            ("Mbps", 1_000_000),
            ("Kbps", 1_000),
            ("bps", 1),
        ],
    )
}

pub fn format_time(ps: Ps) -> String {
    if ps == 0 {
        return "0us".into();
    }
    format_exact(
        ps,
        &[
            ("s", PS_PER_S),
            ("ms", PS_PER_MS),
            ("us", PS_PER_US),
            ("ns", PS_PER_NS),
            ("ps", 1),
        ],
    )
}

/// Time to put `bytes` on a link of `rate_bps`, rounded up to a whole picosecond.
#[inline]
pub fn serialization_ps(bytes: u64, rate_bps: u64) -> Ps {
    (bytes * 8 * PS_PER_S).div_ceil(rate_bps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_papers() {
        assert_eq!(parse_size("128KB").unwrap(), 131_072);
        assert_eq!(parse_size("128KiB").unwrap(), 131_072);
        assert_eq!(parse_size("1460").unwrap(), 1460);
        assert_eq!(parse_size("1.5KB").unwrap(), 1536);
        assert!(parse_size("12 furlongs").is_err());
        assert!(parse_size("0.3B").is_err());
    }

    #[test]
    fn rates_are_decimal() {
        assert_eq!(parse_rate("10Gbps").unwrap(), 10_000_000_000);
        assert_eq!(parse_rate("2.5Gbps").unwrap(), 2_500_000_000);
        assert!(parse_rate("0Gbps").is_err());
        assert!(parse_rate("10GB").is_err());
    }

    #[test]
    fn times_are_exact_picoseconds() {
        assert_eq!(parse_time("0.2us").unwrap(), 200_000);
        assert_eq!(parse_time("1ms").unwrap(), PS_PER_MS);
        assert!(parse_time("5").is_err());
        assert_eq!(format_time(parse_time("0.2us").unwrap()), "200ns");
        assert_eq!(format_size(131_072), "128KB");
        assert_eq!(format_rate(40_000_000_000), "40Gbps");
    }

    #[test]
    fn serialization_is_exact_on_round_rates() {
        assert_eq!(serialization_ps(1500, 10_000_000_000), 1_200_000);
        assert_eq!(serialization_ps(1, 3), 2_666_666_666_667);
    }
}
