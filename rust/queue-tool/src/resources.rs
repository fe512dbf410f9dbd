//! FairScheduler's resource notations (`<minResources>`, `<maxResources>`) into the one Tidal's
//! queue file takes: `"X mb, Y vcores"`, with `", Z gpus"` and `", W fpgas"` for Hadoop 3's
//! `yarn.io/gpu` and `yarn.io/fpga`.
//!
//! FairScheduler reads, case-insensitively:
//! - `"X mb, Y vcores"` (Hadoop 2): a number followed by each unit, anywhere in the text, in any
//!   order; a fraction is cut to its whole part;
//! - `"memory-mb=X, vcores=Y, yarn.io/gpu=Z"` (Hadoop 3): one amount per resource type;
//! - `"X%"`, `"X% memory, Y% cpu"` and `"memory-mb=X%, vcores=Y%"` (Hadoop 3): shares of the
//!   cluster, which depend on the cluster's size at any moment.
//!
//! The absolute forms convert; percentages have no meaning in Tidal's notation and are refused
//! with the reason, as is a text FairScheduler itself would refuse.

use regex::Regex;
use std::sync::OnceLock;

/// A converted resource amount and the resource types it left out, with why.
#[derive(Debug, PartialEq, Eq)]
pub struct Converted {
    /// `"X mb, Y vcores"`, then any GPUs and FPGAs.
    pub text: String,
    /// Resource types of the input that Tidal's notation has no place for.
    pub left_out: Vec<String>,
}

/// `text` in Tidal's notation, or why it cannot be.
pub fn convert(text: &str) -> Result<Converted, String> {
    let lower = text.trim().to_ascii_lowercase();
    if lower.contains('%') {
        return Err(format!(
            "'{}' is a share of the cluster (Hadoop 3's percentage form); Tidal's notation is absolute: \
             give \"X mb, Y vcores\"",
            text.trim()
        ));
    }
    let (text, left_out) = if lower.contains('=') { by_type(&lower)? } else { by_unit(&lower)? };
    Ok(Converted { text, left_out })
}

/// Hadoop 2's `"X mb, Y vcores"`: the first number before each unit.
fn by_unit(lower: &str) -> Result<(String, Vec<String>), String> {
    static PATTERNS: OnceLock<[Regex; 2]> = OnceLock::new();
    let [mb, vcores] = PATTERNS.get_or_init(|| {
        ["mb", "vcores"].map(|unit| Regex::new(&format!(r"(\d+)(\.\d*)?\s*{unit}")).expect("a valid pattern"))
    });
    let amount = |re: &Regex, unit: &str| -> Result<u64, String> {
        let whole = re
            .captures(lower)
            .map(|c| c[1].to_string())
            .ok_or_else(|| format!("'{lower}' gives no amount in {unit} (FairScheduler refuses it too)"))?;
        whole.parse::<u64>().map_err(|_| format!("'{whole}' {unit} is out of range"))
    };
    Ok((format!("{} mb, {} vcores", amount(mb, "mb")?, amount(vcores, "vcores")?), Vec::new()))
}

/// Hadoop 3's `"memory-mb=X, vcores=Y, ..."`: memory, vcores, GPUs and FPGAs convert, other types
/// are left out; memory and vcores must be given since Tidal's notation has no "unlimited".
fn by_type(lower: &str) -> Result<(String, Vec<String>), String> {
    let (mut mb, mut vcores, mut gpus, mut fpgas, mut left_out) = (None, None, None, None, Vec::new());
    for part in lower.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, amount) = part.split_once('=').ok_or_else(|| format!("'{part}' is not 'resource=amount'"))?;
        let (name, amount) = (name.trim(), amount.trim());
        let slot = match name {
            "memory-mb" | "memory" => &mut mb,
            "vcores" => &mut vcores,
            "yarn.io/gpu" => &mut gpus,
            "yarn.io/fpga" => &mut fpgas,
            _ => {
                left_out.push(name.to_string());
                continue;
            }
        };
        let value = amount.parse::<u64>().map_err(|_| {
            format!("{name} '{amount}' is not a whole number (units are not converted: give MB and vcores)")
        })?;
        *slot = Some(value);
    }
    let (Some(mb), Some(vcores)) = (mb, vcores) else {
        return Err(format!("'{lower}' must give both memory-mb and vcores for Tidal's \"X mb, Y vcores\""));
    };
    let mut text = format!("{mb} mb, {vcores} vcores");
    for (amount, unit) in [(gpus, "gpus"), (fpgas, "fpgas")] {
        if let Some(n) = amount {
            text.push_str(&format!(", {n} {unit}"));
        }
    }
    Ok((text, left_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> String {
        let c = convert(text).unwrap();
        assert!(c.left_out.is_empty(), "{text}: {:?}", c.left_out);
        c.text
    }

    #[test]
    fn hadoop2_forms_in_any_order_and_case() {
        assert_eq!(ok("10000 mb, 0 vcores"), "10000 mb, 0 vcores");
        assert_eq!(ok("4 VCores,2048MB"), "2048 mb, 4 vcores");
        assert_eq!(ok(" 1024.9 mb , 2 vcores "), "1024 mb, 2 vcores");
        assert_eq!(ok("1024 mb 2 vcores"), "1024 mb, 2 vcores");
    }

    #[test]
    fn hadoop3_forms() {
        assert_eq!(ok("vcores=8, memory-mb=16384"), "16384 mb, 8 vcores");
        assert_eq!(ok("memory-mb=4096, vcores=4, yarn.io/gpu=2"), "4096 mb, 4 vcores, 2 gpus");
        assert_eq!(ok("yarn.io/fpga=1, vcores=4, memory-mb=4096"), "4096 mb, 4 vcores, 1 fpgas");
        let c = convert("memory-mb=4096, vcores=4, example.com/tpu=2").unwrap();
        assert_eq!(c.text, "4096 mb, 4 vcores");
        assert_eq!(c.left_out, vec!["example.com/tpu".to_string()]);
    }

    #[test]
    fn refused_forms_say_why() {
        for (text, why) in [
            ("50%", "share of the cluster"),
            ("50% memory, 25% cpu", "share of the cluster"),
            ("memory-mb=50%, vcores=10%", "share of the cluster"),
            ("2048 mb", "no amount in vcores"),
            ("4 vcores", "no amount in mb"),
            ("memory-mb=4096", "both memory-mb and vcores"),
            ("memory-mb=4Gi, vcores=2", "not a whole number"),
            ("99999999999999999999 mb, 1 vcores", "out of range"),
        ] {
            let err = convert(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }
}
