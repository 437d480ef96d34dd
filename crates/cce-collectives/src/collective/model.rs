//! The time model's parameters, calibrated to public figures (GAPS.md §14; docs/MODEL.md C6):
//! per instance type (trn1, trn2, trn3, one per NeuronCore arch 2, 3, 4) the DMA engines of a
//! rank (a NeuronCore) and their rate, the CCE reduce rate relative to a copy, the rank's HBM,
//! the cores that share a chip, the links of the ring of chips inside a node and between
//! nodes, and the per-hop latencies. Each parameter carries
//! its tag (MED: a public figure, or one derived from it by the arithmetic its source states;
//! MODEL: the project's choice) and its source, so `cce allreduce --explain` can show them.
//! [`super::timeline`] turns a schedule's packets into times with them.

/// The machine a time model describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instance {
    /// Trn1 (NeuronCore-v2): 16 chips × 2 NeuronCores, NeuronLink-v2.
    Trn1,
    /// Trn2 (NeuronCore-v3): 16 chips × 8 NeuronCores, NeuronLink-v3.
    Trn2,
    /// Trn3 (NeuronCore-v4).
    Trn3,
}

impl Instance {
    /// Every instance type.
    pub const ALL: [Instance; 3] = [Instance::Trn1, Instance::Trn2, Instance::Trn3];
    /// CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Instance::Trn1 => "trn1",
            Instance::Trn2 => "trn2",
            Instance::Trn3 => "trn3",
        }
    }
    /// By CLI name.
    pub fn from_name(s: &str) -> Option<Instance> {
        Self::ALL.into_iter().find(|i| i.name() == s)
    }
    /// The instance type of a NeuronCore arch (2 → trn1, 3 → trn2, 4 and later → trn3).
    pub fn of_arch(arch: u32) -> Instance {
        match arch {
            ..=2 => Instance::Trn1,
            3 => Instance::Trn2,
            _ => Instance::Trn3,
        }
    }
}

impl std::fmt::Display for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Instance {
    type Err = String;
    /// [`Instance::from_name`]; a refusal says what is expected, without the flag.
    fn from_str(s: &str) -> Result<Instance, String> {
        Instance::from_name(s).ok_or_else(|| format!("'{s}': expected trn1, trn2 or trn3"))
    }
}

/// The time model's parameters (defaults per instance, each overridable).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeModel {
    /// Which defaults these started from.
    pub instance: Instance,
    /// DMA engines (queues) per rank; a step's packets are dealt to them in turn.
    pub engines: u32,
    /// One engine's copy rate, bytes read per second.
    pub engine_bytes_per_sec: f64,
    /// Fraction of the copy rate a CCE reduce packet reads at.
    pub cce_rate: f64,
    /// Seconds per descriptor, on the engine that processes it.
    pub per_descriptor: f64,
    /// A rank's memory (HBM share), bytes read + written per second.
    pub hbm_bytes_per_sec: f64,
    /// Consecutive ranks (NeuronCores) on one chip: bytes between them cross no link.
    pub cores_per_chip: usize,
    /// One link of the ring of chips inside a node, each direction, bytes/s.
    pub link_bytes_per_sec: f64,
    /// One EFA interface between nodes, each direction, bytes/s.
    pub inter_link_bytes_per_sec: f64,
    /// EFA interfaces per node; a node's chips share them evenly (chip c of C uses interface
    /// c·E/C), and bytes between two nodes leave through the sender's and arrive through the
    /// receiver's.
    pub efa_per_node: usize,
    /// Seconds per step that touches or waits for another rank in its node (one hop).
    pub step_latency: f64,
    /// Seconds per step that touches or waits for a rank in another node.
    pub inter_latency: f64,
    /// Consecutive ranks per node; a model of more ranks spans several nodes.
    pub ranks_per_node: usize,
    /// Seconds before any rank's first step (the collective's launch and first
    /// synchronisation), fitted to measurements ([`FITTED`]).
    pub launch: f64,
    /// Seconds every step with work adds to its body (its descriptors written, its semaphore
    /// waited on and signalled), fitted to measurements ([`FITTED`]).
    pub step_cost: f64,
    /// The fraction of the engines' copy rate a collective's packets read at, fitted to
    /// measurements ([`FITTED`]).
    pub dma_share: f64,
}

/// The constants fitted to Neuron's measured tables (docs/MODEL.md C28;
/// `cce_collectives::model_report::fit` recomputes them and a test holds these equal to it):
/// `launch` and `step_cost` from the 1 KiB points of the 2-rank Trn1 all-reduce and the 32-rank
/// Trn1 all-gather (2 and 31 steps), `dma_share` from the 2-rank all-reduce of 1 GiB.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fitted {
    /// [`TimeModel::launch`], seconds.
    pub launch: f64,
    /// [`TimeModel::step_cost`], seconds.
    pub step_cost: f64,
    /// [`TimeModel::dma_share`].
    pub dma_share: f64,
}

/// The fitted constants every instance's defaults take (fitted on Trn1's tables: no other
/// instance has a public measurement of its own that states the instance).
pub const FITTED: Fitted = Fitted { launch: 51.24e-6, step_cost: 1.587e-6, dma_share: 0.3579 };

/// One parameter as `--explain` shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// Field name (also the JSON key); its option ([`Parameter::option`]) overrides it.
    pub name: &'static str,
    /// Its value in `unit`.
    pub value: f64,
    /// Unit of `value`.
    pub unit: &'static str,
    /// MED (a public figure or derived from one) or MODEL (the project's choice).
    pub tag: &'static str,
    /// Where it comes from.
    pub source: &'static str,
}

impl Parameter {
    /// The option that overrides it: its name with `-` for `_` (`dma-gbps`), as an option's
    /// name is made from its field's (the CLI's flag is this name after two dashes).
    pub fn option(&self) -> String {
        self.name.replace('_', "-")
    }
}

/// NeuronCores per chip and chips per instance (public instance specifications).
fn cores_per_chip(i: Instance) -> f64 {
    match i {
        Instance::Trn1 => 2.0,
        Instance::Trn2 | Instance::Trn3 => 8.0,
    }
}

const CHIPS_PER_INSTANCE: usize = 16;

/// Links of a chip in a 2D torus.
const TORUS_LINKS: f64 = 4.0;

impl TimeModel {
    /// The defaults for NeuronCore `arch` (its instance type, [`Instance::of_arch`]).
    pub fn defaults(arch: u32) -> Self {
        Self::for_instance(Instance::of_arch(arch))
    }

    /// The defaults for an instance type (docs/MODEL.md C6).
    pub fn for_instance(i: Instance) -> Self {
        let cores = cores_per_chip(i);
        // Per chip: HBM, NeuronLink inside the instance, EFA (GAPS.md §14); a rank is one core,
        // the chip's NeuronLink bandwidth is split over the 4 links a 2D-torus chip has.
        // EFA: trn1.32xlarge 800 Gbps over 8 interfaces, trn2.48xlarge 3.2 Tbps over 16
        // (EFAv3): 100 and 200 Gbps each.
        let (hbm, link, efa, efa_per_node) = match i {
            Instance::Trn1 => (820.0 * 1.073_741_824e9, 384e9, 12.5e9, 8),
            Instance::Trn2 | Instance::Trn3 => (2.9e12, 1024e9, 25e9, 16),
        };
        TimeModel {
            instance: i,
            engines: 16,
            engine_bytes_per_sec: if i == Instance::Trn3 { 38.4e9 } else { 27.2e9 },
            cce_rate: if i == Instance::Trn3 { 1.0 } else { 0.5 },
            per_descriptor: 64e-9,
            hbm_bytes_per_sec: hbm / cores,
            cores_per_chip: cores as usize,
            link_bytes_per_sec: link / TORUS_LINKS,
            inter_link_bytes_per_sec: efa,
            efa_per_node,
            step_latency: 1.5e-6,
            inter_latency: 15e-6,
            ranks_per_node: CHIPS_PER_INSTANCE * cores as usize,
            launch: FITTED.launch,
            step_cost: FITTED.step_cost,
            dma_share: FITTED.dma_share,
        }
    }

    /// These parameters with the fitted terms off (no launch, no step cost, the engines' full
    /// rate): the model as it was before it was held to measurements.
    pub fn unfitted(self) -> Self {
        TimeModel { launch: 0.0, step_cost: 0.0, dma_share: 1.0, ..self }
    }

    /// Every parameter with its value, tag and source.
    pub fn parameters(&self) -> Vec<Parameter> {
        let trn3 = self.instance == Instance::Trn3;
        let p = |name, value, unit, tag, source| Parameter { name, value, unit, tag, source };
        vec![
            p("engines", self.engines as f64, "per rank", "MED", "16 DMA engines per NeuronCore (v2-v4)"),
            p(
                "dma_gbps",
                self.engine_bytes_per_sec * self.engines as f64 / 1e9,
                "GB/s per rank",
                "MED",
                "16 engines x 27.2 GB/s (v2, v3) or 38.4 GB/s (v4)",
            ),
            p(
                "cce_rate",
                self.cce_rate,
                "x copy rate",
                "MED",
                "a CCE reduce at about 50 % of the DMA copy throughput before NeuronCore-v4, full rate on v4",
            ),
            p("alpha_ns", self.per_descriptor * 1e9, "ns per descriptor", "MODEL", "the project's choice"),
            p(
                "hbm_gbps",
                self.hbm_bytes_per_sec / 1e9,
                "GB/s per rank",
                if trn3 { "MODEL" } else { "MED" },
                match self.instance {
                    Instance::Trn1 => "Trn1 HBM 820 GiB/s per chip / 2 cores",
                    Instance::Trn2 => "Trn2 HBM 2.9 TB/s per chip / 8 cores",
                    Instance::Trn3 => "no public figure: Trn2's 2.9 TB/s per chip / 8 cores",
                },
            ),
            p(
                "cores_per_chip",
                self.cores_per_chip as f64,
                "ranks",
                if trn3 { "MODEL" } else { "MED" },
                match self.instance {
                    Instance::Trn1 => "2 NeuronCore-v2 per Trainium chip",
                    Instance::Trn2 => "8 NeuronCore-v3 per Trainium2 chip",
                    Instance::Trn3 => "no public figure here: Trn2's 8",
                },
            ),
            p(
                "link_gbps",
                self.link_bytes_per_sec / 1e9,
                "GB/s per chip link",
                "MODEL",
                match self.instance {
                    Instance::Trn1 => "NeuronLink-v2 384 GB/s per chip (MED) over a 2D torus chip's 4 links",
                    Instance::Trn2 => "NeuronLink-v3 1,024 GB/s per chip inside an instance (MED) over 4 torus links",
                    Instance::Trn3 => "no public figure: Trn2's 1,024 GB/s per chip over 4 torus links",
                },
            ),
            p(
                "inter_link_gbps",
                self.inter_link_bytes_per_sec / 1e9,
                "GB/s per EFA interface",
                if trn3 { "MODEL" } else { "MED" },
                match self.instance {
                    Instance::Trn1 => "trn1.32xlarge: 800 Gbps EFA over 8 interfaces, 100 Gbps each",
                    Instance::Trn2 => "trn2.48xlarge: 3.2 Tbps EFAv3 over 16 interfaces, 200 Gbps each",
                    Instance::Trn3 => "no public figure here: Trn2's 200 Gbps per interface",
                },
            ),
            p(
                "efa_per_node",
                self.efa_per_node as f64,
                "interfaces",
                if trn3 { "MODEL" } else { "MED" },
                match self.instance {
                    Instance::Trn1 => "8 EFA interfaces per trn1.32xlarge (16 on trn1n)",
                    Instance::Trn2 => "16 EFA interfaces per trn2.48xlarge",
                    Instance::Trn3 => "no public figure here: Trn2's 16",
                },
            ),
            p(
                "latency_us",
                self.step_latency * 1e6,
                "us per step (hop inside a node)",
                "MED",
                "1-2 us per hop inside a node (midpoint)",
            ),
            p(
                "inter_latency_us",
                self.inter_latency * 1e6,
                "us per step (hop between nodes)",
                "MED",
                "about 15 us per network hop between nodes (Neuron's inter-node collectives)",
            ),
            p(
                "ranks_per_node",
                self.ranks_per_node as f64,
                "ranks",
                if trn3 { "MODEL" } else { "MED" },
                "16 chips per instance x NeuronCores per chip",
            ),
            p(
                "launch_us",
                self.launch * 1e6,
                "us before the first step",
                "MODEL",
                "fitted: Neuron's measured 2-rank Trn1 all-reduce and 32-rank all-gather at 1 KiB (MODEL C28)",
            ),
            p(
                "step_us",
                self.step_cost * 1e6,
                "us per step with work",
                "MODEL",
                "fitted: the same two measurements, 2 and 31 steps (MODEL C28)",
            ),
            p(
                "dma_share",
                self.dma_share,
                "x the engines' rate",
                "MODEL",
                "fitted: Neuron's measured 2-rank Trn1 all-reduce of 1 GiB (MODEL C28)",
            ),
        ]
    }
}
