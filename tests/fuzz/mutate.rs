//! Inputs for the targets: arbitrary text, and real samples changed by a few edits
//! that keep most of their structure (so the parsers get past their first line).

use proptest::prelude::*;
use proptest::sample::Index;

use crate::corpus::Samples;

/// Text that is hard on the parsers of every format here: control characters and
/// unusual unicode, YAML syntax (anchors, aliases, tags, merge keys, block scalars,
/// directives, document markers), Dockerfile continuations, capture keywords,
/// quantities and `rdma` requests.
const SNIPPETS: &[&str] = &[
    "\0",
    "\x1b[31m",
    "\r",
    "\r\n",
    "\t",
    "\x7f",
    "\u{feff}",
    "\u{2028}",
    "\u{85}",
    "\u{200b}",
    "混合",
    "🚀",
    "é",
    "\n",
    "  ",
    "\n- ",
    ": ",
    ":",
    "#",
    " # c",
    "'",
    "\"",
    "\\",
    "\\\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    "? ",
    "&a ",
    "*a",
    "&a [x, y]",
    "!!str ",
    "!!binary ",
    "!custom ",
    "!<tag:yaml.org,2002:int> ",
    "<<: *a\n",
    "<<: {}\n",
    "|\n  block\n",
    ">-\n  folded\n",
    "---\n",
    "--- ",
    "...\n",
    "%YAML 1.2\n---\n",
    "%TAG ! tag:x,2000:\n",
    "~",
    "null",
    "yes",
    "0x1F",
    "0o17",
    "1e309",
    "-.inf",
    ".nan",
    "-1",
    "18446744073709551616",
    "64Gi",
    "500m",
    "1e3",
    "1(roce)",
    "2（ib）",
    "0(roce)",
    "FROM ",
    "RUN ",
    "ENV NCCL_IB_HCA=mlx5",
    "ENV NCCL_SOCKET_IFNAME eth0",
    "ARG ",
    "apt-get install -y ",
    "dnf install -y ",
    "=",
    "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth0\n",
    "CA 'mlx5_0'\n",
    "\tPort 1:\n",
    "\t\tLink layer: Ethernet\n",
    "\t\tState: Active\n",
    "hca_id:\tmlx5_0\n",
    "\t\tport:\t1\n",
    "\t\t\tGID[  3]:\t\t0000:0000:0000:0000:0000:ffff:0a00:0001, RoCE v2\n",
    "DEV\tPORT\tINDEX\tGID\t\t\t\t\tIPv4  \t\tVER\tDEV\n",
    "mlx5_0\t1\t3\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1  \tv2\teth0\n",
    "ii  libibverbs1:amd64  44.0-2  amd64  verbs\n",
    "rc  librdmacm1  44.0-2  amd64  x\n",
    "Desired=Unknown/Install/Remove/Purge/Hold\n",
    "MLNX_OFED_LINUX-23.10-1.1.9.0:\n",
    "apiVersion: rdmagen/v1alpha1\nkind: Job\n",
    "kind: PyTorchJob\n",
];

/// An edit of a sample; positions are fractions of the current text.
#[derive(Debug, Clone)]
enum Edit {
    /// Insert a stretch of another sample of the same kind.
    Splice {
        at: Index,
        donor: Index,
        from: Index,
        len: usize,
    },
    /// Repeat a stretch in place.
    Duplicate {
        from: Index,
        len: usize,
        times: usize,
    },
    Truncate(Index),
    Delete {
        from: Index,
        len: usize,
    },
    Insert {
        at: Index,
        text: String,
    },
    /// Swap two lines.
    SwapLines(Index, Index),
    /// Re-indent one line by `by` spaces (negative: remove up to that many).
    Indent {
        line: Index,
        by: i8,
    },
    /// Flow collections or block mappings nested `depth` deep.
    Nest {
        at: Index,
        depth: usize,
        kind: u8,
    },
    LongLine {
        at: Index,
        len: usize,
        fill: char,
    },
    /// Many distinct keys (or duplicates when `same`) in one mapping.
    ManyKeys {
        at: Index,
        count: usize,
        same: bool,
    },
    /// An alias bomb: each level repeats the previous one's alias `width` times.
    Aliases {
        at: Index,
        levels: usize,
        width: usize,
    },
}

/// What a long line is made of.
fn fill() -> impl Strategy<Value = char> {
    prop_oneof![Just('a'), Just(' '), Just('é'), any::<char>()]
}

fn edit() -> impl Strategy<Value = Edit> {
    let snippet = prop_oneof![
        4 => prop::sample::select(SNIPPETS).prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
        1 => "\\PC{0,12}",
    ];
    prop_oneof![
        3 => (any::<Index>(), any::<Index>(), any::<Index>(), 0usize..400)
            .prop_map(|(at, donor, from, len)| Edit::Splice { at, donor, from, len }),
        2 => (any::<Index>(), 0usize..200, 1usize..6)
            .prop_map(|(from, len, times)| Edit::Duplicate { from, len, times }),
        1 => any::<Index>().prop_map(Edit::Truncate),
        2 => (any::<Index>(), 0usize..40).prop_map(|(from, len)| Edit::Delete { from, len }),
        6 => (any::<Index>(), snippet).prop_map(|(at, text)| Edit::Insert { at, text }),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
        2 => (any::<Index>(), -6i8..6).prop_map(|(line, by)| Edit::Indent { line, by }),
        1 => (any::<Index>(), 1usize..400, 0u8..4)
            .prop_map(|(at, depth, kind)| Edit::Nest { at, depth, kind }),
        1 => (any::<Index>(), 1usize..20_000, fill())
            .prop_map(|(at, len, fill)| Edit::LongLine { at, len, fill }),
        1 => (any::<Index>(), 1usize..3_000, any::<bool>())
            .prop_map(|(at, count, same)| Edit::ManyKeys { at, count, same }),
        1 => (any::<Index>(), 1usize..12, 2usize..10)
            .prop_map(|(at, levels, width)| Edit::Aliases { at, levels, width }),
    ]
}

/// The char boundary at or before `i`.
fn boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn at(text: &str, index: &Index) -> usize {
    boundary(text, index.index(text.len() + 1))
}

fn apply(text: &mut String, edit: &Edit, samples: &Samples) {
    match edit {
        Edit::Splice {
            at: to,
            donor,
            from,
            len,
        } => {
            let donor = &samples[donor.index(samples.len())].1;
            let start = at(donor, from);
            let end = boundary(donor, start + len);
            let piece = donor[start..end].to_owned();
            text.insert_str(at(text, to), &piece);
        }
        Edit::Duplicate { from, len, times } => {
            let start = at(text, from);
            let end = boundary(text, start + len);
            let piece = text[start..end].repeat(*times);
            text.insert_str(end, &piece);
        }
        Edit::Truncate(to) => {
            let end = at(text, to);
            text.truncate(end);
        }
        Edit::Delete { from, len } => {
            let start = at(text, from);
            let end = boundary(text, start + len);
            text.replace_range(start..end, "");
        }
        Edit::Insert {
            at: to,
            text: piece,
        } => text.insert_str(at(text, to), piece),
        Edit::SwapLines(a, b) => {
            let mut lines: Vec<&str> = text.split('\n').collect();
            let (a, b) = (a.index(lines.len()), b.index(lines.len()));
            lines.swap(a, b);
            *text = lines.join("\n");
        }
        Edit::Indent { line, by } => {
            let mut lines: Vec<String> = text.split('\n').map(str::to_owned).collect();
            let which = line.index(lines.len());
            let l = &mut lines[which];
            if *by >= 0 {
                l.insert_str(0, &" ".repeat(*by as usize));
            } else {
                let spaces = l.len() - l.trim_start_matches(' ').len();
                l.replace_range(..spaces.min(by.unsigned_abs() as usize), "");
            }
            *text = lines.join("\n");
        }
        Edit::Nest {
            at: to,
            depth,
            kind,
        } => {
            let piece = match kind {
                0 => format!("{}x{}", "[".repeat(*depth), "]".repeat(*depth)),
                1 => format!("{}x{}", "{a: ".repeat(*depth), "}".repeat(*depth)),
                2 => (0..*depth)
                    .map(|i| format!("{}k:\n", "  ".repeat(i)))
                    .collect(),
                _ => (0..*depth)
                    .map(|i| format!("{}- \n", "  ".repeat(i)))
                    .collect(),
            };
            text.insert_str(at(text, to), &piece);
        }
        Edit::LongLine { at: to, len, fill } => {
            let piece: String = std::iter::repeat_n(*fill, *len).collect();
            text.insert_str(at(text, to), &piece);
        }
        Edit::ManyKeys {
            at: to,
            count,
            same,
        } => {
            let piece: String = (0..*count)
                .map(|i| {
                    if *same {
                        "k: v\n".to_owned()
                    } else {
                        format!("k{i}: v\n")
                    }
                })
                .collect();
            text.insert_str(at(text, to), &piece);
        }
        Edit::Aliases {
            at: to,
            levels,
            width,
        } => {
            let mut piece = "l0: &l0 [x, x]\n".to_owned();
            for level in 1..=*levels {
                let refs = vec![format!("*l{}", level - 1); *width].join(", ");
                piece.push_str(&format!("l{level}: &l{level} [{refs}]\n"));
            }
            text.insert_str(at(text, to), &piece);
        }
    }
}

/// A sample of `samples` after one to five edits.
pub fn mutated(samples: &'static Samples) -> impl Strategy<Value = String> {
    (any::<Index>(), prop::collection::vec(edit(), 1..6)).prop_map(move |(pick, edits)| {
        let mut text = samples[pick.index(samples.len())].1.clone();
        for e in &edits {
            apply(&mut text, e, samples);
        }
        text
    })
}

/// Arbitrary text: unicode strings, lossily decoded bytes, or printable ASCII lines.
pub fn arbitrary() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(any::<u8>(), 0..512)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        "([ -~]{0,30}\n){0,20}",
    ]
}

/// What each target reads: mostly mutated samples, some arbitrary text.
pub fn input(samples: &'static Samples) -> impl Strategy<Value = String> {
    prop_oneof![4 => mutated(samples), 1 => arbitrary()]
}
