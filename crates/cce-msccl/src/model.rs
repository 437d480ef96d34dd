//! An MSCCL XML file as read: the algorithm, its ranks (`gpu`), their thread blocks (`tb`) and
//! steps, with the numbers as the file gives them (checked by [`crate::check`]) and each
//! element's line, so every later error can point into the file.

/// The collective a file implements (`coll`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coll {
    /// `allreduce`.
    AllReduce,
    /// `reducescatter`.
    ReduceScatter,
    /// `allgather`.
    AllGather,
}

impl Coll {
    /// The name the file uses.
    pub fn name(self) -> &'static str {
        match self {
            Coll::AllReduce => "allreduce",
            Coll::ReduceScatter => "reducescatter",
            Coll::AllGather => "allgather",
        }
    }
    /// By the file's name; the other collectives the executor knows are named in the error.
    pub fn from_name(s: &str) -> Option<Coll> {
        [Coll::AllReduce, Coll::ReduceScatter, Coll::AllGather].into_iter().find(|c| c.name() == s)
    }
}

/// The GPU wire protocol (`proto`): metadata for the CCE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    /// `Simple`.
    Simple,
    /// `LL`.
    Ll,
    /// `LL128`.
    Ll128,
}

impl Proto {
    /// The name the file uses.
    pub fn name(self) -> &'static str {
        match self {
            Proto::Simple => "Simple",
            Proto::Ll => "LL",
            Proto::Ll128 => "LL128",
        }
    }
    /// By the file's name (the executor's three).
    pub fn from_name(s: &str) -> Option<Proto> {
        [Proto::Simple, Proto::Ll, Proto::Ll128].into_iter().find(|p| p.name() == s)
    }
}

/// A buffer as the file names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Buf {
    /// `i`: the rank's input.
    Input,
    /// `o`: the rank's output.
    Output,
    /// `s`: the rank's scratch buffer.
    Scratch,
}

impl Buf {
    /// The file's letter.
    pub fn letter(self) -> &'static str {
        match self {
            Buf::Input => "i",
            Buf::Output => "o",
            Buf::Scratch => "s",
        }
    }
    /// By the file's letter.
    pub fn from_letter(s: &str) -> Option<Buf> {
        [Buf::Input, Buf::Output, Buf::Scratch].into_iter().find(|b| b.letter() == s)
    }
}

/// A step's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `s`: send `src` to the `send` peer.
    Send,
    /// `r`: `dst` = the received chunks.
    Recv,
    /// `rcs`: `dst` = received, and forward it.
    RecvCopySend,
    /// `rrs`: send (received ⊕ `src`) on; nothing written locally.
    RecvReduceSend,
    /// `rrc`: `dst` = received ⊕ `src`.
    RecvReduceCopy,
    /// `rrcs`: `dst` = received ⊕ `src`, and send it on.
    RecvReduceCopySend,
    /// `cpy`: `dst` = `src`.
    Copy,
    /// `re`: `dst` = `dst` ⊕ `src`.
    Reduce,
    /// `nop`: no data; carries a dependency.
    Nop,
}

impl Kind {
    /// Every type, in the file's order of the executor's table.
    pub const ALL: [Kind; 9] = [
        Kind::Send,
        Kind::Recv,
        Kind::RecvCopySend,
        Kind::RecvReduceSend,
        Kind::RecvReduceCopy,
        Kind::RecvReduceCopySend,
        Kind::Copy,
        Kind::Reduce,
        Kind::Nop,
    ];
    /// The file's name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Send => "s",
            Kind::Recv => "r",
            Kind::RecvCopySend => "rcs",
            Kind::RecvReduceSend => "rrs",
            Kind::RecvReduceCopy => "rrc",
            Kind::RecvReduceCopySend => "rrcs",
            Kind::Copy => "cpy",
            Kind::Reduce => "re",
            Kind::Nop => "nop",
        }
    }
    /// By the file's name.
    pub fn from_name(s: &str) -> Option<Kind> {
        Self::ALL.into_iter().find(|k| k.name() == s)
    }
    /// Sends on the thread block's `send` link.
    pub fn sends(self) -> bool {
        matches!(self, Kind::Send | Kind::RecvCopySend | Kind::RecvReduceSend | Kind::RecvReduceCopySend)
    }
    /// Receives from the thread block's `recv` link.
    pub fn receives(self) -> bool {
        matches!(
            self,
            Kind::Recv | Kind::RecvCopySend | Kind::RecvReduceSend | Kind::RecvReduceCopy | Kind::RecvReduceCopySend
        )
    }
    /// Reads its `src` operand.
    pub fn reads_src(self) -> bool {
        matches!(
            self,
            Kind::Send
                | Kind::RecvReduceSend
                | Kind::RecvReduceCopy
                | Kind::RecvReduceCopySend
                | Kind::Copy
                | Kind::Reduce
        )
    }
    /// Writes its `dst` operand.
    pub fn writes_dst(self) -> bool {
        matches!(
            self,
            Kind::Recv
                | Kind::RecvCopySend
                | Kind::RecvReduceCopy
                | Kind::RecvReduceCopySend
                | Kind::Copy
                | Kind::Reduce
        )
    }
    /// Combines values with the reduction operator.
    pub fn reduces(self) -> bool {
        matches!(self, Kind::RecvReduceSend | Kind::RecvReduceCopy | Kind::RecvReduceCopySend | Kind::Reduce)
    }
}

/// An operand as written: a buffer and a chunk offset (−1: unused).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    /// Buffer.
    pub buf: Buf,
    /// First chunk, or −1.
    pub off: i64,
}

/// One `<step>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// `s`.
    pub s: i64,
    /// `type`.
    pub kind: Kind,
    /// `srcbuf`, `srcoff`.
    pub src: Operand,
    /// `dstbuf`, `dstoff`.
    pub dst: Operand,
    /// `cnt`: consecutive chunks.
    pub cnt: i64,
    /// `depid`: the thread block waited for, or −1.
    pub depid: i64,
    /// `deps`: the step of `depid` waited for.
    pub deps: i64,
    /// `hasdep`: whether other steps wait for this one (0 or 1).
    pub hasdep: i64,
    /// Line in the file.
    pub line: u32,
}

/// One `<tb>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tb {
    /// `id`.
    pub id: i64,
    /// `send`: the peer it sends to, or −1.
    pub send: i64,
    /// `recv`: the peer it receives from, or −1.
    pub recv: i64,
    /// `chan`.
    pub chan: i64,
    /// Its steps in file order.
    pub steps: Vec<Step>,
    /// Line in the file.
    pub line: u32,
}

/// One `<gpu>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gpu {
    /// `id`: the rank.
    pub id: i64,
    /// `i_chunks`.
    pub i_chunks: i64,
    /// `o_chunks`.
    pub o_chunks: i64,
    /// `s_chunks`.
    pub s_chunks: i64,
    /// Its thread blocks in file order.
    pub tbs: Vec<Tb>,
    /// Line in the file.
    pub line: u32,
}

/// One `<algo>`: the whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AlgoFile {
    /// `name`.
    pub name: String,
    /// `proto`.
    pub proto: Proto,
    /// `nchannels`.
    pub nchannels: i64,
    /// `nchunksperloop`.
    pub nchunksperloop: i64,
    /// `ngpus`.
    pub ngpus: i64,
    /// `coll`.
    pub coll: Coll,
    /// `inplace`.
    pub inplace: bool,
    /// `outofplace` (absent in older files: `!inplace`).
    pub outofplace: bool,
    /// `minBytes` (absent: 0).
    pub min_bytes: i64,
    /// `maxBytes` (absent or 0: no limit).
    pub max_bytes: i64,
    /// Its ranks in file order.
    pub gpus: Vec<Gpu>,
    /// Line of `<algo>` in the file.
    pub line: u32,
}

impl AlgoFile {
    /// Every `<step>` in the file.
    pub fn step_count(&self) -> usize {
        self.gpus.iter().flat_map(|g| &g.tbs).map(|t| t.steps.len()).sum()
    }
}
