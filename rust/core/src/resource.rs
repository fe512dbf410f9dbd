//! Multi-resource vectors.
//!
//! A fixed-size array keeps every resource operation allocation-free on the heartbeat path.
//! YARN 2.7 only knows memory and vcores. Hadoop 3's countable resource types that clusters
//! declare in practice, GPUs and FPGAs (`yarn.io/gpu`, `yarn.io/fpga`), are dimensions of their
//! own; disk and network exist for the simulator and the multi-resource papers (CPU, memory,
//! disk in/out, network in/out).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// Number of resource dimensions the core tracks.
pub const DIMS: usize = 8;

/// Largest amount accepted in any resource dimension of a node (about an exabyte of memory in
/// MB): larger values can only be corrupt input, and refusing them keeps sums from overflowing.
pub const MAX_RESOURCE_AMOUNT: i64 = 1 << 40;

/// The resource dimensions, in array order.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceKind {
    MemoryMb = 0,
    Vcores = 1,
    DiskReadMbps = 2,
    DiskWriteMbps = 3,
    NetInMbps = 4,
    NetOutMbps = 5,
    Gpus = 6,
    Fpgas = 7,
}

impl ResourceKind {
    pub const ALL: [ResourceKind; DIMS] = [
        ResourceKind::MemoryMb,
        ResourceKind::Vcores,
        ResourceKind::DiskReadMbps,
        ResourceKind::DiskWriteMbps,
        ResourceKind::NetInMbps,
        ResourceKind::NetOutMbps,
        ResourceKind::Gpus,
        ResourceKind::Fpgas,
    ];

    /// The name used in configuration files, traces and JSON.
    pub fn name(self) -> &'static str {
        match self {
            ResourceKind::MemoryMb => "memory_mb",
            ResourceKind::Vcores => "vcores",
            ResourceKind::DiskReadMbps => "disk_read_mbps",
            ResourceKind::DiskWriteMbps => "disk_write_mbps",
            ResourceKind::NetInMbps => "net_in_mbps",
            ResourceKind::NetOutMbps => "net_out_mbps",
            ResourceKind::Gpus => "gpus",
            ResourceKind::Fpgas => "fpgas",
        }
    }

    /// Parses a resource name; accepts the YARN spellings `memory-mb`, `memory`, `yarn.io/gpu`
    /// and `yarn.io/fpga` too.
    pub fn parse(name: &str) -> Option<ResourceKind> {
        let n = name.trim().to_ascii_lowercase().replace('-', "_");
        match n.as_str() {
            "memory" | "memory_mb" | "mem" => Some(ResourceKind::MemoryMb),
            "vcores" | "cpu" | "cpus" => Some(ResourceKind::Vcores),
            "gpu" | "yarn.io/gpu" => Some(ResourceKind::Gpus),
            "fpga" | "yarn.io/fpga" => Some(ResourceKind::Fpgas),
            _ => ResourceKind::ALL.into_iter().find(|k| k.name() == n),
        }
    }
}

/// A vector of resource amounts in integer units (MB, vcores, Mbps, devices).
#[derive(Copy, Clone, Eq, Default, Serialize)]
pub struct Resources(pub [i64; DIMS]);

impl PartialEq for Resources {
    /// One pass of XORs folded together, which the compiler keeps inline and vectorises: the
    /// derived comparison of the array is a call to `memcmp`, a measurable share of the heartbeat.
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.0.iter().zip(&other.0).fold(0, |diff, (a, b)| diff | (a ^ b)) == 0
    }
}

// Equal vectors hash alike: both look at the amounts only.
impl std::hash::Hash for Resources {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

/// Reads a vector of at most [`DIMS`] amounts, the missing trailing ones zero: vectors written
/// before GPUs and FPGAs were dimensions have six.
pub fn deserialize_dims<'de, D, T>(deserializer: D) -> Result<[T; DIMS], D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default + Copy,
{
    let values = Vec::<T>::deserialize(deserializer)?;
    if values.len() > DIMS {
        return Err(serde::de::Error::custom(format!("{} resource amounts, more than {DIMS}", values.len())));
    }
    let mut out = [T::default(); DIMS];
    out[..values.len()].copy_from_slice(&values);
    Ok(out)
}

impl<'de> Deserialize<'de> for Resources {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Resources, D::Error> {
        deserialize_dims(deserializer).map(Resources)
    }
}

impl Resources {
    pub const ZERO: Resources = Resources([0; DIMS]);

    /// Memory and vcores only, the two dimensions YARN 2.7 schedules.
    pub const fn new(memory_mb: i64, vcores: i64) -> Resources {
        Resources([memory_mb, vcores, 0, 0, 0, 0, 0, 0])
    }

    /// Memory, vcores and GPUs, as a Hadoop 3 container or node with `yarn.io/gpu` has them.
    pub const fn with_gpus(memory_mb: i64, vcores: i64, gpus: i64) -> Resources {
        Resources([memory_mb, vcores, 0, 0, 0, 0, gpus, 0])
    }

    pub fn get(&self, kind: ResourceKind) -> i64 {
        self.0[kind as usize]
    }

    pub fn set(&mut self, kind: ResourceKind, amount: i64) {
        self.0[kind as usize] = amount;
    }

    pub fn memory_mb(&self) -> i64 {
        self.0[0]
    }

    pub fn vcores(&self) -> i64 {
        self.0[1]
    }

    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&v| v == 0)
    }

    pub fn any_negative(&self) -> bool {
        self.0.iter().any(|&v| v < 0)
    }

    /// True when every dimension of `self` fits in `available`.
    #[inline]
    pub fn fits_in(&self, available: &Resources) -> bool {
        self.0.iter().zip(available.0.iter()).all(|(a, b)| a <= b)
    }

    /// Component-wise minimum.
    pub fn min(&self, other: &Resources) -> Resources {
        let mut out = *self;
        for (o, b) in out.0.iter_mut().zip(other.0.iter()) {
            *o = (*o).min(*b);
        }
        out
    }

    /// Component-wise maximum.
    pub fn max(&self, other: &Resources) -> Resources {
        let mut out = *self;
        for (o, b) in out.0.iter_mut().zip(other.0.iter()) {
            *o = (*o).max(*b);
        }
        out
    }

    /// Multiplies every dimension by `n`, saturating instead of overflowing.
    pub fn times(&self, n: i64) -> Resources {
        let mut out = *self;
        for v in out.0.iter_mut() {
            *v = v.saturating_mul(n);
        }
        out
    }

    /// The largest share `self[i] / total[i]` over the dimensions the cluster has (DRF's
    /// dominant share). Dimensions with zero total capacity are ignored.
    #[inline]
    pub fn dominant_share(&self, total: &Resources) -> f64 {
        let mut share = 0.0f64;
        for (u, t) in self.0.iter().zip(total.0.iter()) {
            if *t > 0 {
                share = share.max(*u as f64 / *t as f64);
            }
        }
        share
    }

    /// Per-dimension shares of `total` as floats (0 where the cluster has none).
    pub fn shares(&self, total: &Resources) -> [f64; DIMS] {
        let mut out = [0.0; DIMS];
        for i in 0..DIMS {
            if total.0[i] > 0 {
                out[i] = self.0[i] as f64 / total.0[i] as f64;
            }
        }
        out
    }

    /// Saturating subtraction that never goes below zero in any dimension.
    pub fn saturating_sub(&self, other: &Resources) -> Resources {
        let mut out = *self;
        for (o, b) in out.0.iter_mut().zip(other.0.iter()) {
            *o = (*o - *b).max(0);
        }
        out
    }

    /// Cosine-free alignment score used by packing heuristics: the dot product of the demand
    /// and the free capacity, each normalised by the cluster total.
    pub fn alignment(&self, free: &Resources, total: &Resources) -> f64 {
        let d = self.shares(total);
        let f = free.shares(total);
        d.iter().zip(f.iter()).map(|(a, b)| a * b).sum()
    }
}

impl Add for Resources {
    type Output = Resources;
    #[inline]
    fn add(mut self, rhs: Resources) -> Resources {
        self += rhs;
        self
    }
}

impl AddAssign for Resources {
    #[inline]
    fn add_assign(&mut self, rhs: Resources) {
        for (a, b) in self.0.iter_mut().zip(rhs.0.iter()) {
            *a += *b;
        }
    }
}

impl Sub for Resources {
    type Output = Resources;
    #[inline]
    fn sub(mut self, rhs: Resources) -> Resources {
        self -= rhs;
        self
    }
}

impl SubAssign for Resources {
    #[inline]
    fn sub_assign(&mut self, rhs: Resources) {
        for (a, b) in self.0.iter_mut().zip(rhs.0.iter()) {
            *a -= *b;
        }
    }
}

impl fmt::Debug for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Resources {
    /// `<memory:1024, vcores:1>` like YARN, plus any non-zero extra dimension.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<memory:{}, vcores:{}", self.0[0], self.0[1])?;
        for kind in &ResourceKind::ALL[2..] {
            let v = self.get(*kind);
            if v != 0 {
                write!(f, ", {}:{}", kind.name(), v)?;
            }
        }
        write!(f, ">")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dominant_share_ignores_missing_dimensions() {
        let total = Resources::new(1000, 10);
        assert_eq!(Resources::new(100, 5).dominant_share(&total), 0.5);
        assert_eq!(Resources::new(500, 1).dominant_share(&total), 0.5);
        assert_eq!(Resources::ZERO.dominant_share(&Resources::ZERO), 0.0);
    }

    #[test]
    fn fits_in_is_componentwise() {
        let avail = Resources::new(1024, 2);
        assert!(Resources::new(1024, 2).fits_in(&avail));
        assert!(!Resources::new(1025, 1).fits_in(&avail));
        assert!(!Resources::new(1, 3).fits_in(&avail));
    }

    #[test]
    fn parse_accepts_yarn_spellings() {
        assert_eq!(ResourceKind::parse("memory-mb"), Some(ResourceKind::MemoryMb));
        assert_eq!(ResourceKind::parse("VCORES"), Some(ResourceKind::Vcores));
        assert_eq!(ResourceKind::parse("net_out_mbps"), Some(ResourceKind::NetOutMbps));
        assert_eq!(ResourceKind::parse("yarn.io/gpu"), Some(ResourceKind::Gpus));
        assert_eq!(ResourceKind::parse("yarn.io/fpga"), Some(ResourceKind::Fpgas));
        assert_eq!(ResourceKind::parse("yarn.io/tpu"), None);
    }

    #[test]
    fn display_matches_yarn_style() {
        let mut r = Resources::new(2048, 2);
        assert_eq!(r.to_string(), "<memory:2048, vcores:2>");
        r.set(ResourceKind::NetInMbps, 10);
        assert_eq!(r.to_string(), "<memory:2048, vcores:2, net_in_mbps:10>");
        assert_eq!(Resources::with_gpus(1, 1, 2).to_string(), "<memory:1, vcores:1, gpus:2>");
    }

    #[test]
    fn vectors_written_with_six_dimensions_read_with_zero_devices() {
        let old: Resources = serde_json::from_str("[1024,2,3,4,5,6]").unwrap();
        assert_eq!(old.0, [1024, 2, 3, 4, 5, 6, 0, 0]);
        let now = Resources::with_gpus(1, 2, 3);
        assert_eq!(serde_json::from_str::<Resources>(&serde_json::to_string(&now).unwrap()).unwrap(), now);
        assert!(serde_json::from_str::<Resources>("[1,2,3,4,5,6,7,8,9]").is_err());
    }
}
