//! The α-strategy (BoPF §3.5): turning an uncertain burst demand into the demand vector an LQ
//! reports to admission control.
//!
//! If LQ-i wants a fraction `α` of its bursts to fit in what it reports and its K resources are
//! independent, it needs `∏_k F_k(d_k) ≥ α`; splitting the budget evenly gives
//! `d_k = F_k⁻¹(α^(1/K))`. When the resources are perfectly correlated one quantile level
//! covers all of them at once: `d_k = F_k⁻¹(α)`.
//!
//! Demands are TOTAL resource-time of one burst, the convention of [`super::admission`].

use serde::{Deserialize, Serialize};

use crate::resource::{ResourceKind, Resources};

/// What is known about one resource's burst demand.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BurstDistribution {
    /// Observed demands of past bursts.
    Empirical { samples: Vec<f64> },
    /// A normal distribution of the burst demand.
    Normal { mean: f64, std: f64 },
}

/// How the resources' demands move together.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Correlation {
    /// Independent resources: each gets quantile level `α^(1/K)`.
    #[default]
    Independent,
    /// Perfectly (positively) correlated resources: each gets quantile level `α`.
    PerfectlyCorrelated,
}

/// One resource's distribution.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceDistribution {
    pub resource: ResourceKind,
    pub distribution: BurstDistribution,
}

/// The inputs of the α-strategy for one LQ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlphaSpec {
    /// Target fraction of bursts whose demand fits what is reported, in (0, 1).
    pub alpha: f64,
    #[serde(default)]
    pub correlation: Correlation,
    /// Resources not listed have no demand.
    pub resources: Vec<ResourceDistribution>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AlphaError {
    #[error("alpha must lie in (0, 1), got {0}")]
    InvalidAlpha(f64),
    #[error("quantile level must lie in (0, 1), got {0}")]
    InvalidLevel(f64),
    #[error("{resource}: {problem}")]
    InvalidDistribution { resource: &'static str, problem: String },
    #[error("{0} is listed twice")]
    DuplicateResource(&'static str),
    #[error("no resource distribution given")]
    NoResources,
}

// Coefficients of AS241 (Wichura 1988), highest degree first.
const CENTRAL_NUM: [f64; 8] = [
    2509.0809287301227,
    33430.57558358813,
    67265.7709270087,
    45921.95393154987,
    13731.69376550946,
    1971.5909503065513,
    133.14166789178438,
    3.3871328727963665,
];
const CENTRAL_DEN: [f64; 8] = [
    5226.495278852854,
    28729.085735721943,
    39307.89580009271,
    21213.794301586597,
    5394.196021424751,
    687.1870074920579,
    42.31333070160091,
    1.0,
];
const NEAR_NUM: [f64; 8] = [
    0.0007745450142783414,
    0.022723844989269184,
    0.2417807251774506,
    1.2704582524523684,
    3.6478483247632045,
    5.769497221460691,
    4.630337846156546,
    1.4234371107496835,
];
const NEAR_DEN: [f64; 8] = [
    1.0507500716444169e-09,
    0.0005475938084995345,
    0.015198666563616457,
    0.14810397642748008,
    0.6897673349851,
    1.6763848301838038,
    2.053191626637759,
    1.0,
];
const FAR_NUM: [f64; 8] = [
    2.0103343992922881e-07,
    2.7115555687434876e-05,
    0.0012426609473880784,
    0.026532189526576124,
    0.29656057182850487,
    1.7848265399172913,
    5.463784911164114,
    6.657904643501103,
];
const FAR_DEN: [f64; 8] = [
    2.0442631033899397e-15,
    1.421511758316446e-07,
    1.8463183175100548e-05,
    0.0007868691311456133,
    0.014875361290850615,
    0.1369298809227358,
    0.599832206555888,
    1.0,
];

/// Horner evaluation, coefficients highest degree first.
fn poly(coeffs: &[f64], x: f64) -> f64 {
    coeffs.iter().fold(0.0, |acc, c| acc * x + c)
}

/// Standard normal quantile `Φ⁻¹(p)` by Wichura's algorithm AS241 (PPND16), accurate to about
/// 1e-16 relative. Returns -inf at 0, +inf at 1 and NaN outside [0, 1].
pub fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        return q * poly(&CENTRAL_NUM, r) / poly(&CENTRAL_DEN, r);
    }
    let tail = if q < 0.0 { p } else { 1.0 - p };
    let r = (-tail.ln()).sqrt();
    let x = if r <= 5.0 {
        poly(&NEAR_NUM, r - 1.6) / poly(&NEAR_DEN, r - 1.6)
    } else {
        poly(&FAR_NUM, r - 5.0) / poly(&FAR_DEN, r - 5.0)
    };
    if q < 0.0 {
        -x
    } else {
        x
    }
}

/// The inverse of the empirical CDF, `inf { x : F_n(x) ≥ p }`: the smallest sample such that at
/// least a fraction `p` of the samples are at or below it. Never interpolates, so the reported
/// demand really covered a fraction `p` of the observed bursts. `samples` must be non-empty.
pub fn empirical_quantile(samples: &[f64], p: f64) -> f64 {
    assert!(!samples.is_empty(), "empirical quantile of no samples");
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    // Smallest k with k / n >= p, robust to the rounding of p * n.
    let mut k = ((p * n as f64).ceil() as usize).clamp(1, n);
    while k > 1 && (k - 1) as f64 / n as f64 >= p {
        k -= 1;
    }
    while k < n && (k as f64 / n as f64) < p {
        k += 1;
    }
    sorted[k - 1]
}

impl BurstDistribution {
    fn check(&self, resource: &'static str) -> Result<(), AlphaError> {
        let bad = |problem: String| Err(AlphaError::InvalidDistribution { resource, problem });
        match self {
            BurstDistribution::Empirical { samples } => {
                if samples.is_empty() {
                    return bad("empirical distribution has no samples".into());
                }
                if let Some(x) = samples.iter().find(|x| !x.is_finite()) {
                    return bad(format!("sample {x} is not finite"));
                }
            }
            BurstDistribution::Normal { mean, std } => {
                if !mean.is_finite() {
                    return bad(format!("mean {mean} is not finite"));
                }
                if !std.is_finite() || *std < 0.0 {
                    return bad(format!("std {std} must be finite and non-negative"));
                }
            }
        }
        Ok(())
    }

    /// True when the demand is not a single value; only those resources share the α budget.
    pub fn is_random(&self) -> bool {
        match self {
            BurstDistribution::Empirical { samples } => samples.iter().any(|x| x.total_cmp(&samples[0]).is_ne()),
            BurstDistribution::Normal { std, .. } => *std > 0.0,
        }
    }

    /// `F⁻¹(level)`, for a level in (0, 1).
    pub fn quantile(&self, level: f64) -> Result<f64, AlphaError> {
        if !(level > 0.0 && level < 1.0) {
            return Err(AlphaError::InvalidLevel(level));
        }
        Ok(match self {
            BurstDistribution::Empirical { samples } => empirical_quantile(samples, level),
            BurstDistribution::Normal { mean, std } => mean + std * normal_quantile(level),
        })
    }
}

impl AlphaSpec {
    /// The quantile level each resource is provisioned at.
    ///
    /// K counts only the resources whose demand is random: a resource with a known demand is
    /// met with probability 1 and takes nothing from the product `∏ F_k(d_k) ≥ α`, so counting
    /// it would over-provision the others.
    pub fn level(&self) -> Result<f64, AlphaError> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(AlphaError::InvalidAlpha(self.alpha));
        }
        let k = self.resources.iter().filter(|r| r.distribution.is_random()).count().max(1);
        Ok(match self.correlation {
            Correlation::Independent => self.alpha.powf(1.0 / k as f64),
            Correlation::PerfectlyCorrelated => self.alpha,
        })
    }

    /// The demand vector to report: per resource the quantile at [`AlphaSpec::level`], clamped
    /// at zero (a normal quantile can go negative) and rounded up to whole units so rounding never
    /// lowers the covered fraction.
    pub fn demand(&self) -> Result<Resources, AlphaError> {
        if self.resources.is_empty() {
            return Err(AlphaError::NoResources);
        }
        let level = self.level()?;
        let mut out = Resources::ZERO;
        let mut seen = [false; crate::resource::DIMS];
        for rd in &self.resources {
            let name = rd.resource.name();
            if std::mem::replace(&mut seen[rd.resource as usize], true) {
                return Err(AlphaError::DuplicateResource(name));
            }
            rd.distribution.check(name)?;
            let q = rd.distribution.quantile(level)?.max(0.0).ceil();
            if q >= i64::MAX as f64 {
                return Err(AlphaError::InvalidDistribution {
                    resource: name,
                    problem: format!("quantile {q} does not fit a resource amount"),
                });
            }
            out.set(rd.resource, q as i64);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reference values of Φ⁻¹ from standard tables (computed to full double precision).
    const KNOWN: &[(f64, f64)] = &[
        (0.5, 0.0),
        (0.6, 0.2533471031357997),
        (0.75, 0.6744897501960817),
        (0.9, 1.2815515655446004),
        (0.95, 1.6448536269514722),
        (0.975, 1.959963984540054),
        (0.99, 2.3263478740408408),
        (0.999, 3.090232306167813),
        (0.9999, 3.7190164854556804),
        (1e-10, -6.361340902404056),
        (1e-20, -9.262340089798408),
        (0.025, -1.959963984540054),
    ];

    #[test]
    fn normal_quantile_matches_tables() {
        for &(p, z) in KNOWN {
            let got = normal_quantile(p);
            assert!((got - z).abs() <= 1e-12 * z.abs().max(1.0), "p={p}: got {got}, want {z}");
        }
        assert_eq!(normal_quantile(0.0), f64::NEG_INFINITY);
        assert_eq!(normal_quantile(1.0), f64::INFINITY);
        assert!(normal_quantile(1.5).is_nan());
        assert!(normal_quantile(f64::NAN).is_nan());
    }

    proptest! {
        #[test]
        fn normal_quantile_is_odd_and_increasing(p in 1e-300f64..0.5, dp in 1e-9f64..0.4) {
            prop_assert!((normal_quantile(p) + normal_quantile(1.0 - p)).abs() < 1e-9);
            let p2 = (p + dp).min(0.999_999);
            prop_assert!(normal_quantile(p2) > normal_quantile(p));
        }
    }

    #[test]
    fn empirical_quantile_is_inverse_ecdf() {
        let s: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(empirical_quantile(&s, 0.95), 95.0);
        assert_eq!(empirical_quantile(&s, 0.951), 96.0);
        assert_eq!(empirical_quantile(&s, 0.01), 1.0);
        assert_eq!(empirical_quantile(&s, 0.999), 100.0);
        assert_eq!(empirical_quantile(&[7.0, 3.0, 5.0], 0.5), 5.0);
        assert_eq!(empirical_quantile(&[7.0, 3.0, 5.0], 0.34), 5.0);
        assert_eq!(empirical_quantile(&[7.0, 3.0, 5.0], 1.0 / 3.0), 3.0);
    }

    fn normal(resource: ResourceKind, mean: f64, std: f64) -> ResourceDistribution {
        ResourceDistribution { resource, distribution: BurstDistribution::Normal { mean, std } }
    }

    #[test]
    fn independent_resources_use_alpha_to_the_one_over_k() {
        let spec = AlphaSpec {
            alpha: 0.95,
            correlation: Correlation::Independent,
            resources: vec![
                normal(ResourceKind::MemoryMb, 1000.0, 400.0),
                normal(ResourceKind::Vcores, 1000.0, 400.0),
                normal(ResourceKind::NetInMbps, 1000.0, 400.0),
            ],
        };
        let level = spec.level().unwrap();
        assert!((level - 0.95f64.powf(1.0 / 3.0)).abs() < 1e-15);
        let d = spec.demand().unwrap();
        // Φ⁻¹(0.95^(1/3)) = 2.1212..., so 1000 + 400 * 2.1212 = 1848.5 -> 1849.
        assert_eq!(d.memory_mb(), 1849);
        assert_eq!(d.vcores(), 1849);
        assert_eq!(d.get(ResourceKind::NetInMbps), 1849);
        assert_eq!(d.get(ResourceKind::DiskReadMbps), 0);

        // The paper's example: with std at 40% of the mean and three resources, knowing they are
        // perfectly correlated cuts the request by about 10%.
        let corr = AlphaSpec { correlation: Correlation::PerfectlyCorrelated, ..spec.clone() };
        let dc = corr.demand().unwrap();
        assert_eq!(dc.memory_mb(), 1658); // 1000 + 400 * 1.6449
        let cut = 1.0 - dc.memory_mb() as f64 / d.memory_mb() as f64;
        assert!((0.09..0.12).contains(&cut), "cut {cut}");
    }

    #[test]
    fn deterministic_resources_do_not_share_the_budget() {
        let spec = AlphaSpec {
            alpha: 0.9,
            correlation: Correlation::Independent,
            resources: vec![
                normal(ResourceKind::MemoryMb, 100.0, 10.0),
                normal(ResourceKind::Vcores, 50.0, 0.0),
                ResourceDistribution {
                    resource: ResourceKind::NetOutMbps,
                    distribution: BurstDistribution::Empirical { samples: vec![4.0; 5] },
                },
            ],
        };
        assert_eq!(spec.level().unwrap(), 0.9);
        let d = spec.demand().unwrap();
        assert_eq!(d.memory_mb(), 113); // 100 + 10 * 1.2816
        assert_eq!(d.vcores(), 50);
        assert_eq!(d.get(ResourceKind::NetOutMbps), 4);
    }

    #[test]
    fn empirical_alpha_demand_and_clamping() {
        let samples: Vec<f64> = (1..=20).map(|x| f64::from(x) * 10.0).collect();
        let spec = AlphaSpec {
            alpha: 0.81,
            correlation: Correlation::Independent,
            resources: vec![
                ResourceDistribution {
                    resource: ResourceKind::MemoryMb,
                    distribution: BurstDistribution::Empirical { samples: samples.clone() },
                },
                ResourceDistribution {
                    resource: ResourceKind::Vcores,
                    distribution: BurstDistribution::Empirical { samples },
                },
            ],
        };
        // level 0.9 -> the 18th of 20 samples.
        let d = spec.demand().unwrap();
        assert_eq!((d.memory_mb(), d.vcores()), (180, 180));
        // A normal quantile below zero is clamped to no demand.
        let neg = AlphaSpec {
            alpha: 0.1,
            correlation: Correlation::PerfectlyCorrelated,
            resources: vec![normal(ResourceKind::Vcores, 1.0, 10.0)],
        };
        assert_eq!(neg.demand().unwrap(), Resources::ZERO);
    }

    #[test]
    fn invalid_inputs_are_typed_errors() {
        let base = AlphaSpec {
            alpha: 0.9,
            correlation: Correlation::Independent,
            resources: vec![normal(ResourceKind::Vcores, 1.0, 1.0)],
        };
        assert_eq!(AlphaSpec { alpha: 1.0, ..base.clone() }.demand(), Err(AlphaError::InvalidAlpha(1.0)));
        assert!(matches!(AlphaSpec { alpha: f64::NAN, ..base.clone() }.demand(), Err(AlphaError::InvalidAlpha(_))));
        let nan_std = AlphaSpec { resources: vec![normal(ResourceKind::Vcores, 1.0, f64::NAN)], ..base.clone() };
        assert!(matches!(nan_std.demand(), Err(AlphaError::InvalidDistribution { resource: "vcores", .. })));
        let inf_sample = AlphaSpec {
            resources: vec![ResourceDistribution {
                resource: ResourceKind::MemoryMb,
                distribution: BurstDistribution::Empirical { samples: vec![1.0, f64::INFINITY] },
            }],
            ..base.clone()
        };
        assert!(matches!(inf_sample.demand(), Err(AlphaError::InvalidDistribution { resource: "memory_mb", .. })));
        let dup = AlphaSpec {
            resources: vec![normal(ResourceKind::Vcores, 1.0, 1.0), normal(ResourceKind::Vcores, 2.0, 1.0)],
            ..base.clone()
        };
        assert_eq!(dup.demand(), Err(AlphaError::DuplicateResource("vcores")));
        assert_eq!(AlphaSpec { resources: vec![], ..base }.demand(), Err(AlphaError::NoResources));
    }

    #[test]
    fn spec_round_trips_through_json() {
        let spec = AlphaSpec {
            alpha: 0.95,
            correlation: Correlation::PerfectlyCorrelated,
            resources: vec![normal(ResourceKind::MemoryMb, 10.0, 2.0)],
        };
        let json = serde_json::to_string(&spec).unwrap();
        assert!(json.contains("\"perfectly_correlated\"") && json.contains("\"normal\""), "{json}");
        assert_eq!(serde_json::from_str::<AlphaSpec>(&json).unwrap(), spec);
    }
}
