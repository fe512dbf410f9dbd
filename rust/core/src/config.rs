//! Scheduler configuration: the queue allocation file (XML, in `hadoop-conf/`) and the numeric
//! settings the RM takes from `yarn-site.xml`.
//!
//! The XML is parsed here rather than in the Java shim so that the RM and the simulator read the
//! very same file with the very same validation. Parsing is strict: an unknown element or
//! attribute is an error, because a typo silently ignored is a queue silently misconfigured.
//!
//! ```xml
//! <tidal>
//!   <policy>bopf</policy>                      <!-- drf | strict-priority | n-bopf | bopf -->
//!   <app-policy>fifo</app-policy>              <!-- order inside a queue: fifo | uwfq | cfq | job-fair | ujf | carbyne | tetris | tetris-srtf | sjf -->
//!   <altruism-probability>1</altruism-probability>  <!-- carbyne only, in [0, 1], default 1 -->
//!   <fairness-knob>0</fairness-knob>           <!-- tetris and tetris-srtf only, in [0, 1), default 0 -->
//!   <n-min>3</n-min>                           <!-- BoPF's N_min, default 1 -->
//!   <queue name="etl"><weight>1</weight></queue>            <!-- a TQ -->
//!   <queue name="dashboards">                                <!-- an LQ -->
//!     <type>lq</type>
//!     <owner>alice</owner>
//!     <period-sec>150</period-sec>             <!-- one burst per period -->
//!     <deadline-sec>60</deadline-sec>          <!-- the ON period of a burst -->
//!     <burst-demand>                           <!-- TOTAL resource-seconds of one burst -->
//!       <memory-mb>3686400</memory-mb><vcores>1800</vcores>
//!     </burst-demand>
//!   </queue>
//! </tidal>
//! ```
//!
//! Queues nest as in FairScheduler's allocation file: a `<queue>` holding `<queue>` elements
//! (or marked `type="parent"`, with no children yet) is a parent queue, whose children are
//! named under it (`root.eng.etl`; [`child_queue_name`] is the one place a level is added).
//! Only leaves take apps. A parent takes `<weight>` (its share among its siblings), the ACLs,
//! and `<app-policy>` with its knobs, which its leaves inherit unless they set their own; the
//! top-level `<app-policy>` is the default for every queue. Queues may also be nested inside
//! `<queue name="root">`. A file without nesting has every leaf directly under the root, as
//! before.
//!
//! ```xml
//! <queue name="eng"><weight>2</weight><app-policy>carbyne</app-policy>
//!   <queue name="etl"/>
//!   <queue name="dash"><type>lq</type>...</queue>  <!-- admitted against eng's share -->
//! </queue>
//! <queue name="notebooks" type="parent"/>
//! ```
//!
//! Speculative slot reservation ([`crate::reservation`]) is off unless the file enables it, for
//! every queue at the top level or for one queue inside its `<queue>` (a queue's element
//! replaces the top-level one for that queue):
//!
//! ```xml
//! <slot-reservation isolation-probability="0.4" threshold="0.5" prior-shape="1.6" min-samples="2"/>
//! ```
//!
//! Every attribute is optional (defaults as shown). `isolation-probability` is P in [0, 1]
//! (Eq. 2; 1 holds slots until the next stage takes them), `threshold` is the pre-reservation
//! threshold R in (0, 1], `prior-shape` the Pareto shape (> 1) assumed until `min-samples`
//! (>= 1) tasks of a stage finished. Only apps that sent DAG hints reserve; others in such a
//! queue are scheduled as usual.
//!
//! Reservation priority: a slot held for an app carries the *tier* of the app's queue, i.e.
//! [`crate::policy::QueueKey::tier`] as the queue policy computed it when the slot was held
//! (a lower tier is a higher priority: strict-priority puts LQs in tier 0 and TQs in tier 1,
//! BoPF ranks bursting Hard and Soft LQs before the rest; DRF puts every queue in tier 0). Only
//! a queue whose tier is strictly lower may place containers on the held resources, which
//! cancels the hold; everyone else, including other apps of the same queue, sees the node
//! without them.
//!
//! `<uwfq-target-task-sec>30</uwfq-target-task-sec>` (positive seconds, off by default) makes
//! the hints reply advise, for each stage, into how many tasks to split its estimated runtime
//! (runtime partitioning, [`crate::uwfq::partition_count`]).
//!
//! Access control lists, with FairScheduler's elements and notation ([`crate::acl`]): any
//! `<queue>` (also one registered at run time) may give `<aclSubmitApps>` and
//! `<aclAdministerApps>`, and `<queue name="root">` gives the root's, which every queue
//! inherits; the root takes nothing else. The core stores them; the RM shim enforces them when
//! `yarn.acl.enable` is on (unset: everyone for the root, nobody for other queues).
//!
//! ```xml
//! <queue name="root"><aclSubmitApps> </aclSubmitApps><aclAdministerApps>ops admins</aclAdministerApps></queue>
//! <queue name="etl"><aclSubmitApps>etl,alice analysts</aclSubmitApps></queue>
//! ```
//!
//! Instead of `<burst-demand>`, an LQ whose burst size varies gives
//! `<burst-demand-distribution alpha="0.95" correlation="independent">` with one element per
//! resource holding `<normal mean=".." std=".."/>` or `<samples>v1 v2 ..</samples>`; the
//! α-strategy turns it into the demand admission control uses.

use crate::acl::QueueAcls;
use crate::bopf::alpha::{AlphaSpec, BurstDistribution, Correlation, ResourceDistribution};
use crate::bopf::spec::{BurstSpec, LqSpec, QueueSpec, TqSpec, DEFAULT_CYCLES};
use crate::error::{CoreError, Result};
use crate::limits::{LimitDefaults, QueueLimits};
use crate::placement::PlacementPolicy;
use crate::reservation::ReservationSettings;
use crate::resource::{ResourceKind, Resources, MAX_RESOURCE_AMOUNT};
use crate::xml_source::XmlSource;
use serde::Serialize;

/// The root of the queue hierarchy.
pub const ROOT: &str = "root";

/// Levels of queues below the root at most. Scheduling compares queues level by level with a
/// fixed-size key (no allocation per heartbeat); FairScheduler setups rarely go past four.
pub const MAX_QUEUE_DEPTH: usize = 6;

/// Which policy orders queues. One module per policy under [`crate::policy`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PolicyKind {
    /// Weighted dominant resource fairness across queues, FIFO inside a queue.
    Drf,
    /// LQs strictly before TQs, DRF within each group.
    StrictPriority,
    /// BoPF without the Soft class (the paper's N-BoPF baseline).
    NBopf,
    /// Bounded priority fairness.
    Bopf,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 4] = [PolicyKind::Drf, PolicyKind::StrictPriority, PolicyKind::NBopf, PolicyKind::Bopf];

    pub fn parse(name: &str) -> Option<PolicyKind> {
        let n = name.trim().to_ascii_lowercase().replace('_', "-");
        PolicyKind::ALL.into_iter().find(|k| k.name() == n || (n == "sp" && *k == PolicyKind::StrictPriority))
    }

    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Drf => "drf",
            PolicyKind::StrictPriority => "strict-priority",
            PolicyKind::NBopf => "n-bopf",
            PolicyKind::Bopf => "bopf",
        }
    }
}

/// Which policy chooses what starts inside a queue, with its knobs. One module per policy
/// under [`crate::policy`].
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppPolicyKind {
    /// Submission order, AM containers first.
    Fifo,
    /// Carbyne altruistic scheduling. `altruism_probability` (`<altruism-probability>`,
    /// default 1): the chance that a job yields what it does not need at a scheduling event;
    /// 0 gives DRF among the queue's jobs.
    Carbyne { altruism_probability: f64 },
    /// Tetris multi-resource packing. `fairness_knob` (`<fairness-knob>`, f in [0, 1), default
    /// 0): only the (1 - f) fraction of jobs furthest below their fair share compete.
    /// `remaining_work`: `tetris` scores asks by alignment alone (the packer the Carbyne paper
    /// compares against); `tetris-srtf` also favours jobs with less remaining work, which makes
    /// it close to shortest-remaining-time-first.
    Tetris { fairness_knob: f64, remaining_work: bool },
    /// Shortest remaining critical path first.
    Sjf,
    /// User weighted fair queuing: by finish time under user-job fair sharing.
    Uwfq,
    /// Cluster fair queuing: stages by virtual deadline under stage-level fair sharing, with
    /// no user or job context.
    Cfq,
    /// Equal share per job: the job with the smallest dominant usage first.
    JobFair,
    /// User-job fair: the user with the smallest dominant usage first, then that user's job
    /// with the smallest usage.
    Ujf,
}

impl AppPolicyKind {
    /// Every policy with its default knobs.
    pub const ALL: [AppPolicyKind; 9] = [
        AppPolicyKind::Fifo,
        AppPolicyKind::Carbyne { altruism_probability: 1.0 },
        AppPolicyKind::Tetris { fairness_knob: 0.0, remaining_work: false },
        AppPolicyKind::Tetris { fairness_knob: 0.0, remaining_work: true },
        AppPolicyKind::Sjf,
        AppPolicyKind::Uwfq,
        AppPolicyKind::Cfq,
        AppPolicyKind::JobFair,
        AppPolicyKind::Ujf,
    ];

    /// The policy of that name with default knobs.
    pub fn parse(name: &str) -> Option<AppPolicyKind> {
        let n = name.trim().to_ascii_lowercase();
        AppPolicyKind::ALL.into_iter().find(|k| k.name() == n)
    }

    pub fn name(self) -> &'static str {
        match self {
            AppPolicyKind::Fifo => "fifo",
            AppPolicyKind::Carbyne { .. } => "carbyne",
            AppPolicyKind::Tetris { remaining_work: false, .. } => "tetris",
            AppPolicyKind::Tetris { remaining_work: true, .. } => "tetris-srtf",
            AppPolicyKind::Sjf => "sjf",
            AppPolicyKind::Uwfq => "uwfq",
            AppPolicyKind::Cfq => "cfq",
            AppPolicyKind::JobFair => "job-fair",
            AppPolicyKind::Ujf => "ujf",
        }
    }
}

/// What a latency-sensitive queue declares about its bursts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencySpec {
    pub burst: BurstSpec,
    /// Offset of the first burst window from the scheduler's start (admission's `T_i(0)`).
    pub first_burst_ms: u64,
    /// Burst windows admission control plans for.
    pub cycles: u32,
    /// Present when the demand was derived by the α-strategy.
    pub alpha: Option<AlphaSpec>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum QueueKind {
    /// Throughput queue (TQ): batch work, long-term fair share.
    Throughput,
    /// Latency-sensitive queue (LQ): periodic bursts with a deadline.
    Latency(LatencySpec),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueConfig {
    /// Full name, `root.<leaf>`.
    pub name: String,
    pub weight: f64,
    pub kind: QueueKind,
    /// The user allowed to change this queue at run time (besides administrators).
    pub owner: Option<String>,
    /// Slot reservation for this queue's apps; replaces the file-wide setting.
    pub slot_reservation: Option<ReservationSettings>,
    /// `<aclSubmitApps>` and `<aclAdministerApps>`, stored for the host to enforce.
    pub acls: QueueAcls,
    /// The app policy this queue or its nearest ancestor names; `None`: the file's default.
    pub app_policy: Option<AppPolicyKind>,
    /// FairScheduler's per-queue limits ([`crate::limits`]).
    pub limits: QueueLimits,
    /// How long the queue's applications may run, for the host's RM to enforce.
    pub lifetime: AppLifetime,
}

/// `<maxApplicationLifetime>` and `<defaultApplicationLifetime>` of a leaf queue, in seconds, as
/// CapacityScheduler's per-queue `maximum-application-lifetime` and `default-application-lifetime`:
/// an app asking for no lifetime gets the default, one asking for more than the maximum gets the
/// maximum. `None` where the queue sets none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct AppLifetime {
    pub max_s: Option<u64>,
    pub default_s: Option<u64>,
}

/// A parent queue (`<queue>` holding `<queue>` children, or `type="parent"`): it takes no apps;
/// its weight divides its parent's share among its siblings, its app policy and ACLs pass down.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ParentConfig {
    /// Full name, `root.<a>.<b>`.
    pub name: String,
    pub weight: f64,
    pub acls: QueueAcls,
    /// As for [`QueueConfig::app_policy`]: what its leaves inherit unless they name their own.
    pub app_policy: Option<AppPolicyKind>,
    /// FairScheduler's limits on a parent: maxRunningApps and min/maxResources over its subtree.
    pub limits: QueueLimits,
}

impl QueueConfig {
    /// A throughput queue with a weight, the common case.
    pub fn throughput(name: &str, weight: f64) -> QueueConfig {
        QueueConfig {
            name: full_queue_name(name),
            weight,
            kind: QueueKind::Throughput,
            owner: None,
            slot_reservation: None,
            acls: QueueAcls::default(),
            app_policy: None,
            limits: QueueLimits::default(),
            lifetime: AppLifetime::default(),
        }
    }

    pub fn is_latency_sensitive(&self) -> bool {
        matches!(self.kind, QueueKind::Latency(_))
    }

    /// The queue as BoPF admission control sees it, with burst times shifted by `epoch_ms`.
    pub fn admission_spec(&self, epoch_ms: u64) -> QueueSpec {
        match &self.kind {
            QueueKind::Throughput => QueueSpec::Tq(TqSpec { name: self.name.clone(), weight: self.weight }),
            QueueKind::Latency(l) => QueueSpec::Lq(LqSpec {
                name: self.name.clone(),
                weight: self.weight,
                burst: l.burst.clone(),
                start_ms: epoch_ms + l.first_burst_ms,
                cycles: l.cycles,
            }),
        }
    }
}

/// The contents of the allocation file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueFile {
    pub policy: PolicyKind,
    pub app_policy: AppPolicyKind,
    /// BoPF's `N_min`: fair shares are computed for at least this many queues.
    pub n_min: u32,
    /// The leaf queues, the only ones that take apps, in file order.
    pub queues: Vec<QueueConfig>,
    /// The parent queues below the root, each before its children (empty for a flat file).
    pub parents: Vec<ParentConfig>,
    /// User weights and knobs of the UWFQ app policy (`<uwfq-*>` elements).
    pub uwfq: crate::uwfq::UwfqSettings,
    /// Slot reservation for every queue without its own `<slot-reservation>`.
    pub slot_reservation: Option<ReservationSettings>,
    /// The root queue's ACLs (`<queue name="root">`), which every queue inherits.
    pub root_acls: QueueAcls,
    /// FairScheduler's file-wide limit defaults and per-user limits ([`crate::limits`]).
    pub limits: LimitDefaults,
    /// `<queuePlacementPolicy>` ([`crate::placement`]); without it apps go to the queue they
    /// name.
    pub placement: Option<PlacementPolicy>,
}

impl QueueFile {
    /// The slot reservation settings that apply to `queue`, if reservation is on for it.
    pub fn slot_reservation_for(&self, queue: &QueueConfig) -> Option<ReservationSettings> {
        queue.slot_reservation.or(self.slot_reservation)
    }

    /// The app policy that orders `queue`'s apps: its own or inherited, else the file's.
    pub fn app_policy_for(&self, queue: &QueueConfig) -> AppPolicyKind {
        queue.app_policy.unwrap_or(self.app_policy)
    }
}

/// Numeric settings that come from the RM's own configuration.
#[derive(Copy, Clone, Debug, PartialEq, Serialize)]
pub struct Settings {
    /// `yarn.scheduler.minimum-allocation-*`: requests are rounded up to multiples of this.
    pub min_allocation: Resources,
    /// `yarn.scheduler.maximum-allocation-*`: larger requests are rejected.
    pub max_allocation: Resources,
    /// Containers started on one node per heartbeat, at most.
    pub max_assign_per_heartbeat: u32,
    /// How often the core samples queue shares into its history ([`crate::history`]), in ms of
    /// its clock.
    pub history_sample_interval_ms: i64,
    /// Whether a node is reserved for an ask larger than its free space
    /// ([`crate::container_reservation`]).
    pub reserve_containers: bool,
    /// The AM share of a leaf the queue file gives none (neither `<maxAMShare>` nor
    /// `<queueMaxAMShareDefault>`); `None` checks none. The ResourceManager passes
    /// FairScheduler's default, 0.5.
    pub default_max_am_share: Option<f64>,
}

/// YARN's maximum allocation of memory and vcores, with GPUs and FPGAs bounded only by the core's
/// overflow limit: Hadoop 3's RM holds asks to each resource type's maximum before they reach the
/// scheduler.
pub fn max_allocation(memory_mb: i64, vcores: i64) -> Resources {
    let mut max = Resources::new(memory_mb, vcores);
    max.set(ResourceKind::Gpus, MAX_RESOURCE_AMOUNT);
    max.set(ResourceKind::Fpgas, MAX_RESOURCE_AMOUNT);
    max
}

/// The history sample interval unless configured: a second.
pub const DEFAULT_HISTORY_SAMPLE_INTERVAL_MS: i64 = 1_000;
/// The longest history sample interval: an hour.
pub const MAX_HISTORY_SAMPLE_INTERVAL_MS: i64 = 3_600_000;

impl Default for Settings {
    /// YARN 2.7's defaults.
    fn default() -> Self {
        Settings {
            min_allocation: Resources::new(1024, 1),
            max_allocation: max_allocation(8192, 32),
            max_assign_per_heartbeat: 10,
            history_sample_interval_ms: DEFAULT_HISTORY_SAMPLE_INTERVAL_MS,
            reserve_containers: false,
            default_max_am_share: None,
        }
    }
}

impl Settings {
    pub fn validate(&self) -> Result<()> {
        let (min, max) = (self.min_allocation, self.max_allocation);
        if min.any_negative() || max.any_negative() {
            return Err(CoreError::Config(format!(
                "allocation limits must not be negative (minimum {min}, maximum {max})"
            )));
        }
        // Normalising rounds asks up to multiples of the minimum: bounded limits keep that and
        // every usage sum from overflowing.
        if min.0.iter().chain(max.0.iter()).any(|&v| v > MAX_RESOURCE_AMOUNT) {
            return Err(CoreError::Config(format!(
                "allocation limits must not exceed {MAX_RESOURCE_AMOUNT} in any resource (minimum {min}, maximum {max})"
            )));
        }
        if min.memory_mb() == 0 || min.vcores() == 0 {
            return Err(CoreError::Config(format!("minimum allocation {min} must be positive in memory and vcores")));
        }
        if !min.fits_in(&max) {
            return Err(CoreError::Config(format!("minimum allocation {min} exceeds maximum allocation {max}")));
        }
        if self.max_assign_per_heartbeat == 0 {
            return Err(CoreError::Config("max assignments per heartbeat must be at least 1".into()));
        }
        if let Some(share) = self.default_max_am_share {
            if !(0.0..=1.0).contains(&share) {
                return Err(CoreError::Config(format!("default AM share {share} is not a fraction in [0, 1]")));
            }
        }
        let interval = self.history_sample_interval_ms;
        if !(1..=MAX_HISTORY_SAMPLE_INTERVAL_MS).contains(&interval) {
            return Err(CoreError::Config(format!(
                "history sample interval {interval} ms is outside [1, {MAX_HISTORY_SAMPLE_INTERVAL_MS}] ms"
            )));
        }
        Ok(())
    }
}

/// Normalises a short or full queue name to its full name (`etl` is `root.etl`; `root.eng.etl`
/// stays); the empty name and `root` name the root. Hosts call it rather than keep their own rule.
pub fn full_queue_name(name: &str) -> String {
    let name = name.trim();
    if name.is_empty() || name == ROOT {
        ROOT.to_string()
    } else if name.starts_with("root.") {
        name.to_string()
    } else {
        child_queue_name(ROOT, name)
    }
}

/// The full name of queue `name` under the parent whose full name is `parent`: the one place a
/// level is added to a queue name.
pub fn child_queue_name(parent: &str, name: &str) -> String {
    format!("{parent}.{name}")
}

/// The full name of the parent of the queue whose full name is `full` (`root` for the root).
pub fn parent_queue_name(full: &str) -> &str {
    full.rsplit_once('.').map_or(ROOT, |(parent, _)| parent)
}

fn valid_leaf_name(leaf: &str) -> bool {
    !leaf.is_empty() && leaf.len() <= 128 && leaf.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Parses and validates an allocation file. On error nothing is returned, so a caller that
/// keeps its previous configuration loses nothing.
pub fn parse_queue_file(xml: &str) -> Result<QueueFile> {
    let doc =
        XmlSource::parse(xml).map_err(|e| CoreError::Config(format!("allocation file is not well-formed XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "tidal" {
        return Err(CoreError::Config(format!(
            "allocation file root element must be <tidal>, found <{}>",
            root.tag_name().name()
        )));
    }
    let mut policy = PolicyKind::Drf;
    let mut app_policy = AppPolicyKind::Fifo;
    let mut n_min = 1;
    let mut altruism: Option<(f64, u32)> = None;
    let mut fairness: Option<(f64, u32)> = None;
    let mut uwfq = crate::uwfq::UwfqSettings::default();
    let mut slot_reservation = None;
    let mut root_acls = QueueAcls::default();
    let mut root_line = None;
    let mut limits = LimitDefaults::default();
    let mut placement = None;
    // Queues come second: they inherit the file's app policy, wherever <app-policy> stands.
    let is_queue = |n: &roxmltree::Node| n.tag_name().name() == "queue";
    for child in root.children().filter(|n| n.is_element() && !is_queue(n)) {
        let line = doc.line(child);
        let text = child.text().unwrap_or("").trim();
        match child.tag_name().name() {
            "policy" => {
                policy = PolicyKind::parse(text).ok_or_else(|| {
                    let known: Vec<&str> = PolicyKind::ALL.iter().map(|k| k.name()).collect();
                    CoreError::Config(format!(
                        "line {line}: unknown policy '{text}' (known: {})",
                        known.join(", ")
                    ))
                })?;
            }
            "app-policy" => app_policy = parse_app_policy(text, line)?,
            "n-min" => {
                n_min = text.parse::<u32>().ok().filter(|n| *n >= 1).ok_or_else(|| {
                    CoreError::Config(format!("line {line}: n-min '{text}' is not a whole number >= 1"))
                })?;
            }
            tag if LimitDefaults::ELEMENTS.contains(&tag) => {
                limits.set(tag, text).map_err(|e| CoreError::Config(format!("line {line}: <{tag}>: {e}")))?
            }
            "user" => parse_user(&doc, child, &mut limits)?,
            "queuePlacementPolicy" if placement.is_some() => {
                return Err(CoreError::Config(format!("line {line}: <queuePlacementPolicy> is given twice")))
            }
            "queuePlacementPolicy" => {
                placement = Some(crate::placement::parse(&doc, child).map_err(CoreError::Config)?);
            }
            "uwfq-user-weight" | "uwfq-grace-period-sec" | "uwfq-default-task-sec" | "uwfq-target-task-sec" => {
                parse_uwfq(child, line, &mut uwfq)?
            }
            "slot-reservation" => slot_reservation = Some(parse_slot_reservation(child, line, "<tidal>")?),
            "altruism-probability" => altruism = Some((parse_altruism(text, line)?, line)),
            "fairness-knob" => fairness = Some((parse_fairness(text, line)?, line)),
            other => {
                return Err(CoreError::Config(format!(
                    "line {line}: unknown element <{other}> in <tidal> (expected <policy>, <app-policy>, <n-min>, <queue>, \
                     <altruism-probability>, <fairness-knob>, <slot-reservation>, <uwfq-*>, <user>, \
                     <queueMaxAppsDefault>, <queueMaxAMShareDefault>, <userMaxAppsDefault> or <queuePlacementPolicy>)"
                )))
            }
        }
    }
    apply_knobs(&mut app_policy, altruism, fairness, "")?;
    let mut tree = Tree { default_app_policy: Some(app_policy), ..Tree::default() };
    for child in root.children().filter(|n| n.is_element() && is_queue(n)) {
        let line = doc.line(child);
        if child.attribute("name").map(full_queue_name).as_deref() == Some(ROOT) {
            if root_line.replace(line).is_some() {
                return Err(CoreError::Config(format!("line {line}: queue '{ROOT}' is declared twice")));
            }
            root_acls = parse_root_queue(&doc, child, &mut tree)?;
        } else {
            parse_queue_tree(&doc, child, ROOT, None, 1, &mut tree)?;
        }
    }
    if tree.leaves.is_empty() {
        return Err(CoreError::Config("allocation file declares no <queue>".into()));
    }
    uwfq.validate().map_err(|e| CoreError::Config(e.to_string()))?;
    let Tree { leaves: queues, parents, .. } = tree;
    Ok(QueueFile { policy, app_policy, n_min, queues, parents, uwfq, slot_reservation, root_acls, limits, placement })
}

fn parse_app_policy(text: &str, line: u32) -> Result<AppPolicyKind> {
    AppPolicyKind::parse(text).ok_or_else(|| {
        let known: Vec<&str> = AppPolicyKind::ALL.iter().map(|k| k.name()).collect();
        CoreError::Config(format!("line {line}: unknown app-policy '{text}' (known: {})", known.join(", ")))
    })
}

fn parse_altruism(text: &str, line: u32) -> Result<f64> {
    text.parse::<f64>().ok().filter(|p| (0.0..=1.0).contains(p)).ok_or_else(|| {
        CoreError::Config(format!("line {line}: altruism-probability '{text}' is not a number in [0, 1]"))
    })
}

fn parse_fairness(text: &str, line: u32) -> Result<f64> {
    text.parse::<f64>()
        .ok()
        .filter(|f| (0.0..1.0).contains(f))
        .ok_or_else(|| CoreError::Config(format!("line {line}: fairness-knob '{text}' is not a number in [0, 1)")))
}

/// Sets the knobs given (with their lines) on the app policy they belong to; they may come
/// before or after `<app-policy>`. `scope` prefixes errors (`queue 'root.a' `, or empty).
fn apply_knobs(
    policy: &mut AppPolicyKind,
    altruism: Option<(f64, u32)>,
    fairness: Option<(f64, u32)>,
    scope: &str,
) -> Result<()> {
    match (policy, altruism, fairness) {
        (AppPolicyKind::Carbyne { altruism_probability }, Some((p, _)), None) => *altruism_probability = p,
        (AppPolicyKind::Tetris { fairness_knob, .. }, None, Some((f, _))) => *fairness_knob = f,
        (_, None, None) => {}
        (kind, Some((_, line)), _) if !matches!(kind, AppPolicyKind::Carbyne { .. }) => {
            return Err(CoreError::Config(format!(
                "line {line}: {scope}<altruism-probability> applies to app-policy carbyne, not {}",
                kind.name()
            )))
        }
        (kind, _, Some((_, line))) => {
            return Err(CoreError::Config(format!(
                "line {line}: {scope}<fairness-knob> applies to app-policy tetris or tetris-srtf, not {}",
                kind.name()
            )))
        }
        (kind, _, _) => unreachable!("knobs of {} are handled above", kind.name()),
    }
    Ok(())
}

/// `<user name=".."><maxRunningApps>n</maxRunningApps></user>`.
fn parse_user(doc: &XmlSource, node: roxmltree::Node, limits: &mut LimitDefaults) -> Result<()> {
    let line = doc.line(node);
    let bad = |line: u32, what: String| CoreError::Config(format!("line {line}: <user>: {what}"));
    if let Some(a) = node.attributes().find(|a| a.name() != "name") {
        return Err(bad(line, format!("unknown attribute '{}'", a.name())));
    }
    let user = node.attribute("name").map(str::trim).filter(|u| !u.is_empty());
    let user = user.ok_or_else(|| bad(line, "needs a name=\"..\" attribute".into()))?;
    let mut max = None;
    for child in node.children().filter(|n| n.is_element()) {
        let cline = doc.line(child);
        let text = child.text().unwrap_or("").trim();
        match child.tag_name().name() {
            "maxRunningApps" if max.is_none() => {
                let n = text.parse::<u32>().map_err(|_| {
                    bad(cline, format!("user '{user}' maxRunningApps '{text}' is not a whole number >= 0"))
                })?;
                max = Some(n);
            }
            "maxRunningApps" => return Err(bad(cline, format!("user '{user}' maxRunningApps is given twice"))),
            other => {
                return Err(bad(cline, format!("user '{user}': unknown element <{other}> (expected <maxRunningApps>)")))
            }
        }
    }
    let max = max.ok_or_else(|| bad(line, format!("user '{user}' needs <maxRunningApps>")))?;
    limits.set_user(user, max).map_err(|e| bad(line, e))
}

/// The queues of a file as they are parsed, with the line each full name was declared on.
#[derive(Default)]
struct Tree {
    leaves: Vec<QueueConfig>,
    parents: Vec<ParentConfig>,
    lines: std::collections::HashMap<String, u32>,
    default_app_policy: Option<AppPolicyKind>,
}

impl Tree {
    fn declare(&mut self, name: &str, line: u32) -> Result<()> {
        match self.lines.insert(name.to_string(), line) {
            Some(first) => {
                Err(CoreError::Config(format!("line {line}: queue '{name}' is declared twice (first on line {first})")))
            }
            None => Ok(()),
        }
    }
}

/// `<queue name="root">`: the root's ACLs, and queues nested in it as if they stood in <tidal>
/// (FairScheduler files often nest every queue in the root).
fn parse_root_queue(doc: &XmlSource, node: roxmltree::Node, tree: &mut Tree) -> Result<QueueAcls> {
    let line = doc.line(node);
    if let Some(attr) = node.attributes().find(|a| a.name() != "name") {
        return Err(CoreError::Config(format!("line {line}: unknown attribute '{}' on <queue>", attr.name())));
    }
    let mut acls = QueueAcls::default();
    for child in node.children().filter(|n| n.is_element()) {
        let cline = doc.line(child);
        match child.tag_name().name() {
            tag if QueueAcls::ELEMENTS.contains(&tag) => parse_acl(child, cline, ROOT, &mut acls)?,
            "queue" => parse_queue_tree(doc, child, ROOT, None, 1, tree)?,
            other => {
                return Err(CoreError::Config(format!(
                    "line {cline}: queue '{ROOT}': unknown element <{other}> (the root takes only <aclSubmitApps>, \
                     <aclAdministerApps> and <queue>)"
                )))
            }
        }
    }
    Ok(acls)
}

/// One `<queue>` under the parent named `parent` at `depth` levels below the root: a parent
/// (it holds `<queue>` elements, or says `type="parent"`) with its subtree, or a leaf.
fn parse_queue_tree(
    doc: &XmlSource,
    node: roxmltree::Node,
    parent: &str,
    inherited: Option<AppPolicyKind>,
    depth: usize,
    tree: &mut Tree,
) -> Result<()> {
    let line = doc.line(node);
    let is_parent = match node.attribute("type").map(str::trim) {
        Some("parent") => true,
        Some(other) => {
            return Err(CoreError::Config(format!(
                "line {line}: <queue type=\"{other}\">: the type attribute takes only \"parent\" \
                 (an LQ is <type>lq</type> inside the queue)"
            )))
        }
        None => node.children().any(|n| n.is_element() && n.tag_name().name() == "queue"),
    };
    if !is_parent {
        let q = parse_queue(doc, node, parent, &["name"], inherited, tree.default_app_policy)?;
        tree.declare(&q.name, line)?;
        tree.leaves.push(q);
        return Ok(());
    }
    let name = queue_name(node, line, parent, &["name", "type"])?;
    tree.declare(&name, line)?;
    if depth > MAX_QUEUE_DEPTH {
        return Err(CoreError::Config(format!(
            "line {line}: queue '{name}' is nested deeper than {MAX_QUEUE_DEPTH} levels below the root"
        )));
    }
    let mut common = Common::default();
    let mut children = Vec::new();
    for child in node.children().filter(|n| n.is_element()) {
        let cline = doc.line(child);
        let tag = child.tag_name().name();
        let text = child.text().unwrap_or("").trim();
        if tag == "queue" {
            children.push(child);
        } else if !common.take(child, cline, tag, text, &name)? {
            return Err(CoreError::Config(format!(
                "line {cline}: parent queue '{name}': unknown element <{tag}> (a parent takes <weight>, \
                 <app-policy>, <altruism-probability>, <fairness-knob>, <aclSubmitApps>, <aclAdministerApps>, \
                 <maxRunningApps>, <minResources>, <maxResources> and <queue>; LQ and slot-reservation \
                 settings go on leaves)"
            )));
        }
    }
    let app_policy = common.app_policy(inherited, tree.default_app_policy, &name)?;
    if common.limits.max_am_share.is_some() {
        // As in FairScheduler: the AM share is a leaf's, of the leaf's own fair share.
        return Err(CoreError::Config(format!(
            "line {line}: parent queue '{name}': <maxAMShare> applies to leaf queues only"
        )));
    }
    tree.parents.push(ParentConfig {
        name: name.clone(),
        weight: common.weight,
        acls: common.acls,
        app_policy,
        limits: common.limits,
    });
    for child in children {
        parse_queue_tree(doc, child, &name, app_policy, depth + 1, tree)?;
    }
    Ok(())
}

/// The full name of `<queue name="..">` under `parent`, checked; `attributes` are the ones the
/// element may carry. At the top level the name may also be given in full (`root.etl`).
fn queue_name(node: roxmltree::Node, line: u32, parent: &str, attributes: &[&str]) -> Result<String> {
    if let Some(attr) = node.attributes().find(|a| !attributes.contains(&a.name())) {
        return Err(CoreError::Config(format!("line {line}: unknown attribute '{}' on <queue>", attr.name())));
    }
    let raw = node
        .attribute("name")
        .ok_or_else(|| CoreError::Config(format!("line {line}: <queue> has no name attribute")))?;
    let name = if parent == ROOT { full_queue_name(raw) } else { child_queue_name(parent, raw.trim()) };
    let leaf = name.strip_prefix(parent).and_then(|rest| rest.strip_prefix('.')).unwrap_or("");
    if !valid_leaf_name(leaf) {
        return Err(CoreError::Config(format!(
            "line {line}: queue name '{raw}' under '{parent}' is invalid (use letters, digits, '_' and '-'; \
             nest <queue> elements for a hierarchy)"
        )));
    }
    Ok(name)
}

/// The elements leaf and parent `<queue>`s share.
struct Common {
    weight: f64,
    app_policy: Option<AppPolicyKind>,
    altruism: Option<(f64, u32)>,
    fairness: Option<(f64, u32)>,
    acls: QueueAcls,
    limits: QueueLimits,
}

impl Default for Common {
    fn default() -> Self {
        Common {
            weight: 1.0,
            app_policy: None,
            altruism: None,
            fairness: None,
            acls: QueueAcls::default(),
            limits: QueueLimits::default(),
        }
    }
}

impl Common {
    /// Takes `child` of queue `name` when it is a shared element; false when it is not one.
    fn take(&mut self, child: roxmltree::Node, line: u32, tag: &str, text: &str, name: &str) -> Result<bool> {
        match tag {
            "weight" => {
                self.weight = text.parse::<f64>().ok().filter(|w| w.is_finite() && *w > 0.0).ok_or_else(|| {
                    CoreError::Config(format!(
                        "line {line}: queue '{name}' field {tag}: '{text}' is not a positive number"
                    ))
                })?
            }
            "app-policy" => self.app_policy = Some(parse_app_policy(text, line)?),
            "altruism-probability" => self.altruism = Some((parse_altruism(text, line)?, line)),
            "fairness-knob" => self.fairness = Some((parse_fairness(text, line)?, line)),
            tag if QueueAcls::ELEMENTS.contains(&tag) => parse_acl(child, line, name, &mut self.acls)?,
            tag if QueueLimits::ELEMENTS.contains(&tag) => self
                .limits
                .set(tag, text)
                .map_err(|e| CoreError::Config(format!("line {line}: queue '{name}' field {tag}: {e}")))?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The queue's app policy: its own, else the `inherited` one (both `None`: the file's
    /// `default`), with the queue's knobs applied; `None` when neither it nor an ancestor sets one.
    fn app_policy(
        &self,
        inherited: Option<AppPolicyKind>,
        default: Option<AppPolicyKind>,
        name: &str,
    ) -> Result<Option<AppPolicyKind>> {
        if self.app_policy.is_none() && self.altruism.is_none() && self.fairness.is_none() {
            return Ok(inherited);
        }
        let mut policy =
            self.app_policy.or(inherited).or(default).ok_or_else(|| {
                CoreError::Config(format!("queue '{name}': a knob needs <app-policy> in the same queue"))
            })?;
        apply_knobs(&mut policy, self.altruism, self.fairness, &format!("queue '{name}' "))?;
        Ok(Some(policy))
    }
}

/// An `<aclSubmitApps>` or `<aclAdministerApps>` element of `queue`, into `acls`. The text is
/// taken as written: a single space is a list (nobody), not blank.
fn parse_acl(node: roxmltree::Node, line: u32, queue: &str, acls: &mut QueueAcls) -> Result<()> {
    let tag = node.tag_name().name();
    let bad = |what: String| CoreError::Config(format!("line {line}: queue '{queue}' field {tag}: {what}"));
    if node.children().any(|n| n.is_element()) || node.attributes().len() > 0 {
        return Err(bad("takes text only (\"users groups\"), no attributes or child elements".into()));
    }
    let text: String = node.children().filter_map(|n| if n.is_text() { n.text() } else { None }).collect();
    acls.set(tag, &text).map_err(bad)
}

/// `<slot-reservation isolation-probability=".." threshold=".." prior-shape=".." min-samples=".."/>`.
fn parse_slot_reservation(node: roxmltree::Node, line: u32, scope: &str) -> Result<ReservationSettings> {
    let mut s = ReservationSettings::default();
    let bad = |what: String| CoreError::Config(format!("line {line}: {scope} <slot-reservation>: {what}"));
    for attr in node.attributes() {
        let v = attr.value().trim();
        let number = || v.parse::<f64>().map_err(|_| bad(format!("{} '{v}' is not a number", attr.name())));
        match attr.name() {
            "isolation-probability" => s.isolation_probability = number()?,
            "threshold" => s.prereserve_threshold = number()?,
            "prior-shape" => s.prior_shape = number()?,
            "min-samples" => {
                s.min_samples = v.parse::<u32>().map_err(|_| bad(format!("min-samples '{v}' is not a whole number")))?
            }
            other => {
                return Err(bad(format!(
                "unknown attribute '{other}' (expected isolation-probability, threshold, prior-shape or min-samples)"
            )))
            }
        }
    }
    if node.children().any(|n| n.is_element()) {
        return Err(bad("takes attributes only, no child elements".into()));
    }
    s.validate().map_err(|e| bad(e.to_string()))?;
    Ok(s)
}

/// One `<uwfq-*>` element: `<uwfq-user-weight user="alice">2</uwfq-user-weight>`,
/// `<uwfq-grace-period-sec>2</uwfq-grace-period-sec>` or `<uwfq-default-task-sec>`.
fn parse_uwfq(node: roxmltree::Node, line: u32, out: &mut crate::uwfq::UwfqSettings) -> Result<()> {
    let tag = node.tag_name().name();
    let text = node.text().unwrap_or("").trim();
    let number =
        text.parse::<f64>().map_err(|_| CoreError::Config(format!("line {line}: <{tag}> '{text}' is not a number")))?;
    match tag {
        "uwfq-user-weight" => {
            let user = node
                .attribute("user")
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .ok_or_else(|| CoreError::Config(format!("line {line}: <{tag}> needs a user=\"..\" attribute")))?;
            if out.user_weights.iter().any(|(u, _)| u == user) {
                return Err(CoreError::Config(format!("line {line}: <{tag}> for user '{user}' is given twice")));
            }
            out.user_weights.push((user.to_string(), number));
        }
        "uwfq-grace-period-sec" => out.grace_period_sec = number,
        "uwfq-target-task-sec" => out.target_task_sec = Some(number),
        _ => out.default_task_sec = number,
    }
    out.validate().map_err(|e| CoreError::Config(format!("line {line}: {e}")))
}

/// Parses one `<queue>` element; also the body of a run-time queue registration, which may name
/// the parent queue it goes under with `parent="root.eng"` (default: the root).
pub fn parse_queue_element(xml: &str) -> Result<QueueConfig> {
    let doc = XmlSource::parse(xml)
        .map_err(|e| CoreError::Config(format!("queue definition is not well-formed XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "queue" {
        return Err(CoreError::Config(format!(
            "queue definition must be a <queue> element, found <{}>",
            root.tag_name().name()
        )));
    }
    let line = doc.line(root);
    let parent = match root.attribute("parent").map(str::trim) {
        None => ROOT.to_string(),
        Some(p) => {
            let full = full_queue_name(p);
            let below_root = full.strip_prefix(ROOT).and_then(|rest| rest.strip_prefix('.'));
            if full != ROOT && !below_root.is_some_and(|rest| rest.split('.').all(valid_leaf_name)) {
                return Err(CoreError::Config(format!("line {line}: <queue parent=\"{p}\">: not a queue name")));
            }
            full
        }
    };
    parse_queue(&doc, root, &parent, &["name", "parent"], None, None)
}

fn parse_seconds(text: &str, queue: &str, field: &str, line: u32) -> Result<u64> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0 && *v < 1e15)
        .map(|v| (v * 1000.0).round() as u64)
        .ok_or_else(|| {
            CoreError::Config(format!(
                "line {line}: queue '{queue}' field {field}: '{text}' is not a non-negative number of seconds"
            ))
        })
}

/// Reads `<memory-mb>..</memory-mb><vcores>..</vcores>`-style children into a vector.
fn parse_resources(doc: &XmlSource, node: roxmltree::Node, queue: &str, field: &str) -> Result<Resources> {
    let mut out = Resources::ZERO;
    for child in node.children().filter(|n| n.is_element()) {
        let line = doc.line(child);
        let name = child.tag_name().name();
        let kind = ResourceKind::parse(name).ok_or_else(|| {
            CoreError::Config(format!("line {line}: queue '{queue}' field {field}: unknown resource <{name}>"))
        })?;
        let text = child.text().unwrap_or("").trim();
        let v = text.parse::<i64>().ok().filter(|v| *v >= 0).ok_or_else(|| {
            CoreError::Config(format!(
                "line {line}: queue '{queue}' field {field}.{}: '{text}' is not a non-negative whole number",
                kind.name()
            ))
        })?;
        out.set(kind, v);
    }
    Ok(out)
}

fn parse_distribution(doc: &XmlSource, node: roxmltree::Node, queue: &str) -> Result<AlphaSpec> {
    let line = doc.line(node);
    let field = "burst-demand-distribution";
    let bad =
        |line: u32, what: String| CoreError::Config(format!("line {line}: queue '{queue}' field {field}: {what}"));
    let alpha_text = node.attribute("alpha").ok_or_else(|| bad(line, "missing attribute alpha".into()))?;
    let alpha =
        alpha_text.trim().parse::<f64>().map_err(|_| bad(line, format!("alpha '{alpha_text}' is not a number")))?;
    let correlation = match node.attribute("correlation").map(str::trim) {
        None | Some("independent") => Correlation::Independent,
        Some("correlated") | Some("perfectly-correlated") => Correlation::PerfectlyCorrelated,
        Some(other) => return Err(bad(line, format!("correlation '{other}' is not independent or correlated"))),
    };
    let mut resources = Vec::new();
    for child in node.children().filter(|n| n.is_element()) {
        let cline = doc.line(child);
        let name = child.tag_name().name();
        let resource = ResourceKind::parse(name).ok_or_else(|| bad(cline, format!("unknown resource <{name}>")))?;
        let dist = child.children().find(|n| n.is_element()).ok_or_else(|| {
            bad(cline, format!("<{name}> needs a <normal mean=\"..\" std=\"..\"/> or <samples> child"))
        })?;
        let number = |attr: &str| -> Result<f64> {
            let t = dist.attribute(attr).ok_or_else(|| bad(cline, format!("<normal> for {name} lacks {attr}")))?;
            t.trim().parse::<f64>().map_err(|_| bad(cline, format!("{name} {attr} '{t}' is not a number")))
        };
        let distribution = match dist.tag_name().name() {
            "normal" => BurstDistribution::Normal { mean: number("mean")?, std: number("std")? },
            "samples" => {
                let text = dist.text().unwrap_or("");
                let samples = text
                    .split(|c: char| c.is_whitespace() || c == ',')
                    .filter(|t| !t.is_empty())
                    .map(|t| t.parse::<f64>().map_err(|_| bad(cline, format!("{name} sample '{t}' is not a number"))))
                    .collect::<Result<Vec<f64>>>()?;
                BurstDistribution::Empirical { samples }
            }
            other => return Err(bad(cline, format!("unknown distribution <{other}> for {name}"))),
        };
        resources.push(ResourceDistribution { resource, distribution });
    }
    let spec = AlphaSpec { alpha, correlation, resources };
    spec.demand().map_err(|e| bad(line, e.to_string()))?;
    Ok(spec)
}

/// A leaf `<queue>` under `parent`, which passes down `inherited` (see [`Common::app_policy`]).
fn parse_queue(
    doc: &XmlSource,
    node: roxmltree::Node,
    parent: &str,
    attributes: &[&str],
    inherited: Option<AppPolicyKind>,
    default_app_policy: Option<AppPolicyKind>,
) -> Result<QueueConfig> {
    let line = doc.line(node);
    let name = queue_name(node, line, parent, attributes)?;
    let mut common = Common::default();
    let mut latency = false;
    let mut owner = None;
    let (mut period, mut deadline, mut first, mut cycles) = (None, None, 0u64, DEFAULT_CYCLES);
    let mut demand = None;
    let mut alpha = None;
    let mut slot_reservation = None;
    let mut lifetime = AppLifetime::default();
    let bad = |line: u32, field: &str, text: &str, expected: &str| {
        CoreError::Config(format!("line {line}: queue '{name}' field {field}: '{text}' is not {expected}"))
    };
    let seconds = |line: u32, field: &str, text: &str| {
        text.parse::<u64>()
            .ok()
            .filter(|s| *s >= 1)
            .ok_or_else(|| bad(line, field, text, "a whole number of seconds >= 1"))
    };
    for child in node.children().filter(|n| n.is_element()) {
        let cline = doc.line(child);
        let text = child.text().unwrap_or("").trim();
        let tag = child.tag_name().name();
        if common.take(child, cline, tag, text, &name)? {
            continue;
        }
        match tag {
            "type" => {
                latency = match text.to_ascii_lowercase().as_str() {
                    "lq" | "latency" => true,
                    "tq" | "throughput" => false,
                    _ => return Err(bad(cline, tag, text, "lq or tq")),
                }
            }
            "owner" if !text.is_empty() => owner = Some(text.to_string()),
            "owner" => return Err(bad(cline, tag, text, "a user name")),
            "period-sec" => period = Some(parse_seconds(text, &name, tag, cline)?),
            "deadline-sec" => deadline = Some(parse_seconds(text, &name, tag, cline)?),
            "first-burst-sec" => first = parse_seconds(text, &name, tag, cline)?,
            "cycles" => {
                cycles = text
                    .parse::<u32>()
                    .ok()
                    .filter(|c| *c >= 1)
                    .ok_or_else(|| bad(cline, tag, text, "a whole number >= 1"))?
            }
            "burst-demand" => demand = Some(parse_resources(doc, child, &name, tag)?),
            "burst-demand-distribution" => alpha = Some(parse_distribution(doc, child, &name)?),
            "slot-reservation" => {
                slot_reservation = Some(parse_slot_reservation(child, cline, &format!("queue '{name}'"))?)
            }
            "maxApplicationLifetime" => lifetime.max_s = Some(seconds(cline, tag, text)?),
            "defaultApplicationLifetime" => lifetime.default_s = Some(seconds(cline, tag, text)?),
            other => {
                return Err(CoreError::Config(format!(
                    "line {cline}: queue '{name}': unknown element <{other}> (expected <weight>, <type>, \
                     <owner>, <period-sec>, <deadline-sec>, <first-burst-sec>, <cycles>, <burst-demand>, \
                     <burst-demand-distribution>, <slot-reservation>, <maxApplicationLifetime>, \
                     <defaultApplicationLifetime>, <app-policy>, <altruism-probability>, <fairness-knob>, <aclSubmitApps>, <aclAdministerApps>, <maxRunningApps>, <maxAMShare>, \
                     <minResources>, <maxResources> or, for a parent, <queue>)"
                )))
            }
        }
    }
    let weight = common.weight;
    let missing = |field: &str| CoreError::Config(format!("line {line}: LQ '{name}' needs <{field}>"));
    let kind = if latency {
        let demand = match (demand, &alpha) {
            (Some(_), Some(_)) => {
                return Err(CoreError::Config(format!(
                    "line {line}: queue '{name}' gives both <burst-demand> and <burst-demand-distribution>"
                )))
            }
            (Some(d), None) => d,
            (None, Some(a)) => a.demand().map_err(|e| CoreError::Config(format!("queue '{name}': {e}")))?,
            (None, None) => return Err(missing("burst-demand")),
        };
        let burst = BurstSpec {
            period_ms: period.ok_or_else(|| missing("period-sec"))?,
            deadline_ms: deadline.ok_or_else(|| missing("deadline-sec"))?,
            demand,
        };
        let spec = LatencySpec { burst, first_burst_ms: first, cycles, alpha };
        let lq = LqSpec { name: name.clone(), weight, burst: spec.burst.clone(), start_ms: first, cycles };
        lq.validate().map_err(|e| CoreError::Config(format!("line {line}: {e}")))?;
        QueueKind::Latency(spec)
    } else {
        if period.is_some() || deadline.is_some() || demand.is_some() || alpha.is_some() {
            return Err(CoreError::Config(format!(
                "line {line}: queue '{name}' has burst settings but is not <type>lq</type>"
            )));
        }
        QueueKind::Throughput
    };
    if let AppLifetime { max_s: Some(max), default_s: Some(default) } = lifetime {
        if default > max {
            return Err(CoreError::Config(format!(
                "line {line}: queue '{name}' field defaultApplicationLifetime: {default} s exceeds its \
                 maxApplicationLifetime of {max} s"
            )));
        }
    }
    let app_policy = common.app_policy(inherited, default_app_policy, &name)?;
    Ok(QueueConfig {
        name,
        weight,
        kind,
        owner,
        slot_reservation,
        acls: common.acls,
        app_policy,
        limits: common.limits,
        lifetime,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_queues_and_policy() {
        let f = parse_queue_file(
            r#"<tidal><policy>DRF</policy>
                 <queue name="a"><weight>2.5</weight></queue>
                 <queue name="root.b"/></tidal>"#,
        )
        .unwrap();
        assert_eq!(f.policy, PolicyKind::Drf);
        assert_eq!(f.queues[0], QueueConfig::throughput("a", 2.5));
        assert_eq!(f.queues[1], QueueConfig::throughput("root.b", 1.0));
        assert_eq!(f.n_min, 1);
    }

    #[test]
    fn application_lifetimes_are_parsed_and_checked() {
        let f = parse_queue_file(
            r#"<tidal><queue name="a"><maxApplicationLifetime>600</maxApplicationLifetime>
                 <defaultApplicationLifetime>60</defaultApplicationLifetime></queue>
                 <queue name="b"/></tidal>"#,
        )
        .unwrap();
        assert_eq!(f.queues[0].lifetime, AppLifetime { max_s: Some(600), default_s: Some(60) });
        assert_eq!(f.queues[1].lifetime, AppLifetime::default());
        let e = parse_queue_file(
            r#"<tidal><queue name="a"><maxApplicationLifetime>60</maxApplicationLifetime>
                 <defaultApplicationLifetime>600</defaultApplicationLifetime></queue></tidal>"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("defaultApplicationLifetime: 600 s exceeds its maxApplicationLifetime of 60 s"), "{e}");
        let e = parse_queue_file(
            r#"<tidal><queue name="a"><maxApplicationLifetime>0</maxApplicationLifetime></queue></tidal>"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("field maxApplicationLifetime: '0' is not a whole number of seconds >= 1"), "{e}");
    }

    #[test]
    fn errors_name_the_queue_field_and_line() {
        let e =
            parse_queue_file("<tidal>\n<queue name=\"a\"><weight>-1</weight></queue></tidal>").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("'root.a'") && e.contains("weight"), "{e}");
        let e = parse_queue_file("<tidal><queue name=\"a\"/><queue name=\"root.a\"/></tidal>").unwrap_err().to_string();
        assert!(e.contains("declared twice"), "{e}");
        let e =
            parse_queue_file("<tidal><queue name=\"a\"><wieght>1</wieght></queue></tidal>").unwrap_err().to_string();
        assert!(e.contains("<wieght>"), "{e}");
        assert!(parse_queue_file("<tidal><queue name=\"a\">").is_err());
        assert!(parse_queue_file("<tidal/>").is_err());
        assert!(parse_queue_file("<tidal><policy>lottery</policy><queue name=\"a\"/></tidal>")
            .unwrap_err()
            .to_string()
            .contains("lottery"));
        assert!(parse_queue_file("<tidal><queue name=\"a.b\"/></tidal>").is_err());
    }

    #[test]
    fn app_policies_and_their_knobs() {
        let f = |body: &str| parse_queue_file(&format!("<tidal>{body}<queue name=\"a\"/></tidal>"));
        assert_eq!(
            f("<app-policy>carbyne</app-policy>").unwrap().app_policy,
            AppPolicyKind::Carbyne { altruism_probability: 1.0 }
        );
        assert_eq!(
            f("<altruism-probability>0.5</altruism-probability><app-policy>carbyne</app-policy>").unwrap().app_policy,
            AppPolicyKind::Carbyne { altruism_probability: 0.5 }
        );
        assert_eq!(
            f("<app-policy>tetris</app-policy><fairness-knob>0.25</fairness-knob>").unwrap().app_policy,
            AppPolicyKind::Tetris { fairness_knob: 0.25, remaining_work: false }
        );
        assert_eq!(f("<app-policy>SJF</app-policy>").unwrap().app_policy, AppPolicyKind::Sjf);
        let e =
            f("<app-policy>sjf</app-policy><altruism-probability>0.5</altruism-probability>").unwrap_err().to_string();
        assert!(e.contains("applies to app-policy carbyne"), "{e}");
        assert!(f("<app-policy>carbyne</app-policy><fairness-knob>0.5</fairness-knob>").is_err());
        assert!(f("<app-policy>carbyne</app-policy><altruism-probability>1.5</altruism-probability>").is_err());
        assert!(f("<app-policy>tetris</app-policy><fairness-knob>1</fairness-knob>").is_err());
    }

    #[test]
    fn slot_reservation_file_wide_and_per_queue() {
        let f = parse_queue_file(
            r#"<tidal><slot-reservation isolation-probability="0.7"/>
                 <queue name="a"/>
                 <queue name="b"><slot-reservation threshold="0.25" min-samples="3"/></queue></tidal>"#,
        )
        .unwrap();
        let a = f.slot_reservation_for(&f.queues[0]).unwrap();
        assert_eq!((a.isolation_probability, a.prereserve_threshold), (0.7, 0.5));
        let b = f.slot_reservation_for(&f.queues[1]).unwrap();
        assert_eq!((b.isolation_probability, b.prereserve_threshold, b.min_samples), (0.4, 0.25, 3));
        let off = parse_queue_file("<tidal><queue name=\"a\"/></tidal>").unwrap();
        assert_eq!(off.slot_reservation_for(&off.queues[0]), None);
        let e = |body: &str| {
            parse_queue_file(&format!("<tidal>{body}<queue name=\"a\"/></tidal>")).unwrap_err().to_string()
        };
        assert!(e(r#"<slot-reservation isolation-probability="1.5"/>"#).contains("isolation-probability"));
        assert!(e(r#"<slot-reservation threshold="0"/>"#).contains("prereserve-threshold"));
        assert!(e(r#"<slot-reservation prior-shape="1"/>"#).contains("prior-shape"));
        assert!(e(r#"<slot-reservation probability="0.5"/>"#).contains("unknown attribute 'probability'"));
        assert!(e(r#"<slot-reservation isolation-probability="x"/>"#).contains("not a number"));
        let q = parse_queue_file(
            r#"<tidal><queue name="a"><slot-reservation isolation-probability="-1"/></queue></tidal>"#,
        );
        assert!(q.unwrap_err().to_string().contains("queue 'root.a'"));
        assert_eq!(
            parse_queue_file("<tidal><uwfq-target-task-sec>30</uwfq-target-task-sec><queue name=\"a\"/></tidal>")
                .unwrap()
                .uwfq
                .target_task_sec,
            Some(30.0)
        );
        assert!(e("<uwfq-target-task-sec>0</uwfq-target-task-sec>").contains("target"));
    }

    #[test]
    fn acls_of_queues_and_the_root() {
        use crate::acl::Acl;
        let f = parse_queue_file(
            "<tidal>\n<queue name=\"root\"><aclSubmitApps> </aclSubmitApps>\n\
             <aclAdministerApps>ops admins</aclAdministerApps></queue>\n\
             <queue name=\"a\"><aclSubmitApps>alice,bob analysts</aclSubmitApps></queue>\n\
             <queue name=\"b\"><aclAdministerApps>*</aclAdministerApps><aclSubmitApps/></queue>\n\
             <queue name=\"c\"/></tidal>",
        )
        .unwrap();
        assert_eq!(f.queues.len(), 3, "the root is not a leaf");
        assert_eq!(f.root_acls.submit_apps.as_ref().map(Acl::to_string).as_deref(), Some(" "));
        assert_eq!(f.root_acls.administer_apps.as_ref().map(Acl::to_string).as_deref(), Some("ops admins"));
        assert_eq!(f.queues[0].acls.submit_apps.as_ref().map(Acl::to_string).as_deref(), Some("alice,bob analysts"));
        assert_eq!(f.queues[0].acls.administer_apps, None);
        assert_eq!(f.queues[1].acls.administer_apps, Some(Acl::Everyone));
        assert_eq!(f.queues[1].acls.submit_apps, Some(Acl::nobody()));
        assert_eq!(f.queues[2].acls, QueueAcls::default());
        let none = parse_queue_file("<tidal><queue name=\"a\"/></tidal>").unwrap();
        assert_eq!(none.root_acls, QueueAcls::default());

        // A run-time registration carries its ACLs too, and cannot define the root.
        let q = parse_queue_element("<queue name=\"x\"><aclAdministerApps>carol</aclAdministerApps></queue>").unwrap();
        assert_eq!(q.acls.administer_apps.map(|a| a.to_string()).as_deref(), Some("carol "));
        for root in ["root", "", " "] {
            let e = parse_queue_element(&format!("<queue name=\"{root}\"><aclSubmitApps>*</aclSubmitApps></queue>"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("is invalid"), "{root:?}: {e}");
        }
    }

    #[test]
    fn acl_errors_name_the_line_queue_and_field() {
        let e = |xml: &str| parse_queue_file(xml).unwrap_err().to_string();
        let msg = e("<tidal>\n<queue name=\"a\">\n<aclSubmitApps>alice, bob</aclSubmitApps></queue></tidal>");
        assert!(msg.contains("line 3") && msg.contains("'root.a'") && msg.contains("field aclSubmitApps: "), "{msg}");
        assert!(msg.contains("empty name"), "{msg}");
        let msg = e("<tidal><queue name=\"a\"><aclAdministerApps>\n  ops\n</aclAdministerApps></queue></tidal>");
        assert!(msg.contains("field aclAdministerApps: ") && msg.contains("one line"), "{msg}");
        let msg = e(
            "<tidal><queue name=\"a\"><aclSubmitApps>x</aclSubmitApps><aclSubmitApps>y</aclSubmitApps></queue></tidal>",
        );
        assert!(msg.contains("field aclSubmitApps: is given twice"), "{msg}");
        let msg = e("<tidal><queue name=\"a\"><aclSubmitApps><user>x</user></aclSubmitApps></queue></tidal>");
        assert!(msg.contains("takes text only"), "{msg}");
        let msg =
            e("<tidal><queue name=\"root\"><aclSubmitApps>x y z</aclSubmitApps></queue><queue name=\"a\"/></tidal>");
        assert!(msg.contains("queue 'root' field aclSubmitApps: ") && msg.contains("'y z'"), "{msg}");
        let msg = e("<tidal><queue name=\"root\"><weight>2</weight></queue><queue name=\"a\"/></tidal>");
        assert!(msg.contains("queue 'root': unknown element <weight>"), "{msg}");
        let msg = e("<tidal><queue name=\"root\"/><queue name=\"root\"/><queue name=\"a\"/></tidal>");
        assert!(msg.contains("'root' is declared twice"), "{msg}");
        let msg = e("<tidal><queue name=\"root\"/></tidal>");
        assert!(msg.contains("declares no <queue>"), "{msg}");
        let msg = e("<tidal><queue name=\"a\"><aclKillApps>x</aclKillApps></queue></tidal>");
        assert!(msg.contains("<aclKillApps>") && msg.contains("<aclAdministerApps>"), "{msg}");
    }

    #[test]
    fn queue_names_are_built_in_one_place() {
        for (given, full) in [("", "root"), (" root ", "root"), ("a", "root.a"), ("root.a", "root.a")] {
            assert_eq!(full_queue_name(given), full, "{given:?}");
        }
    }

    #[test]
    fn settings_validation() {
        assert!(Settings::default().validate().is_ok());
        let s = Settings { min_allocation: Resources::new(16384, 1), ..Settings::default() };
        assert!(s.validate().unwrap_err().to_string().contains("exceeds"));
        assert!(Settings { max_assign_per_heartbeat: 0, ..Settings::default() }.validate().is_err());
    }
}
