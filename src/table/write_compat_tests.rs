//! The writer as it was before it was split into `encode_blocks` and `layout` (commit 804e368,
//! copied unchanged but for its name) as the reference for the bytes of the current writer:
//! every codec, block size, offset width, don't-care mask and uniform slice gives the same
//! file, and so does a slice encoded in block ranges (as the ranks of a split unit do) and
//! laid out by `layout`.

use super::codec::{ValueCodec, Wld2Bit, Wld2BitThreats, CODEC_2BIT_THREATS};
use super::error::TableError;
use super::header::{Header, TableMeta, FORMAT_VERSION, HEADER_LEN, HEADER_SUMMED, RULES_ENGLISH};
use super::write::{fill_majority, fill_neighbours, WriteOptions};
use super::NO_CONST;
use bitvec::prelude::{BitSlice, BitVec, Lsb0};
use rayon::prelude::*;
use std::cell::RefCell;
use xxhash_rust::xxh64::{xxh64, Xxh64};

/// The encoder behind every writer function, for codec `C`.
pub(super) fn encode_old<C: ValueCodec>(
    meta: &TableMeta,
    values: &[u8],
    dont_care: Option<&BitSlice<u64, Lsb0>>,
    opts: &WriteOptions,
    min_width: usize,
) -> Result<Vec<u8>, TableError> {
    if values.len() as u64 != meta.positions {
        return Err(TableError::Invalid(format!(
            "{} values for {} positions of slice {}",
            values.len(),
            meta.positions,
            meta.slice
        )));
    }
    let size = crate::index::SliceIndex::new(meta.slice).size();
    if meta.positions != size {
        return Err(TableError::Invalid(format!(
            "{} positions given, but slice {} has {size}",
            meta.positions, meta.slice
        )));
    }
    if meta.wins + meta.losses + meta.draws != meta.positions {
        return Err(TableError::Invalid(format!(
            "wins {} + losses {} + draws {} != positions {} (slice {})",
            meta.wins, meta.losses, meta.draws, meta.positions, meta.slice
        )));
    }
    if !meta.slice.is_valid() {
        return Err(TableError::Invalid(format!(
            "invalid slice {:?}",
            meta.slice
        )));
    }
    if opts.block_positions < 20 || !opts.block_positions.is_multiple_of(20) {
        return Err(TableError::Invalid(format!(
            "block size {} is not a positive multiple of 20",
            opts.block_positions
        )));
    }
    if !(1..=22).contains(&opts.level) {
        return Err(TableError::Invalid(format!("zstd level {}", opts.level)));
    }
    if let Some(m) = dont_care {
        if m.len() != values.len() {
            return Err(TableError::Invalid(format!(
                "don't-care mask of {} bits for {} values",
                m.len(),
                values.len()
            )));
        }
    }
    let ok = |v: u8| v <= C::MAX_SYMBOL || Some(v) == C::DONT_CARE;
    if let Some(i) = values.iter().position(|&v| !ok(v)) {
        return Err(TableError::Invalid(format!(
            "value {} at index {i}",
            values[i]
        )));
    }
    if opts.rules > u32::from(u8::MAX) {
        return Err(TableError::Invalid(format!("rules id {}", opts.rules)));
    }
    let threats = C::ID == CODEC_2BIT_THREATS;
    let cm = opts.codec == super::cm::CODEC_CM_THREATS;
    let cm6 = opts.codec == super::cm6::CODEC_CM_FILLED;
    if threats && opts.rules != RULES_ENGLISH {
        return Err(TableError::Invalid(format!(
            "codec {} needs English rules (rules id {})",
            C::ID,
            opts.rules
        )));
    }
    let index = threats.then(|| crate::index::SliceIndex::new(meta.slice));
    let bp = opts.block_positions as usize;

    // Fill and encode blocks in parallel (deterministic: each block on its own).
    struct Enc {
        data: Vec<u8>,
        constant: u32,
    }
    thread_local! {
        static CCTX: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    }
    let blocks: Result<Vec<Enc>, TableError> = values
        .par_chunks(bp)
        .enumerate()
        .map(|(b, chunk)| {
            let mut v = chunk.to_vec();
            if let Some(m) = dont_care {
                let dc = C::DONT_CARE.unwrap_or(0);
                for i in m[b * bp..b * bp + chunk.len()].iter_ones() {
                    v[i] = dc;
                }
            }
            if cm6 {
                let ix = index.as_ref().expect("codec 6 has an index");
                let start = (b * bp) as u64;
                return match super::cm6::encode_block(ix, start, &v) {
                    Ok(super::cm6::Coded::Const(c)) => Ok(Enc {
                        data: Vec::new(),
                        constant: u32::from(c),
                    }),
                    Ok(super::cm6::Coded::Bytes(data)) => Ok(Enc {
                        data,
                        constant: NO_CONST,
                    }),
                    Err(i) => Err(TableError::Invalid(format!(
                        "no value at index {i} of slice {}, which codec 6 stores",
                        meta.slice
                    ))),
                };
            }
            if cm {
                let ix = index.as_ref().expect("codec 5 has an index");
                let start = (b * bp) as u64;
                return match super::cm::encode_block(ix, start, &v) {
                    Ok(super::cm::Coded::Const(c)) => Ok(Enc {
                        data: Vec::new(),
                        constant: u32::from(c),
                    }),
                    Ok(super::cm::Coded::Bytes(data)) => Ok(Enc {
                        data,
                        constant: NO_CONST,
                    }),
                    Err(i) => Err(TableError::Invalid(format!(
                        "no value at index {i} of slice {}, which codec 5 stores",
                        meta.slice
                    ))),
                };
            }
            if let Some(ix) = &index {
                // Codec 4: every position the probe never reads is don't care (decided from
                // the position alone, so the probe knows without a flag), and don't-care runs
                // continue their neighbours' value where they agree.
                let dc = C::DONT_CARE.unwrap_or(0);
                for (k, x) in v.iter_mut().enumerate() {
                    if *x != dc {
                        let p = ix.unrank((b * bp + k) as u64).expect("index below size");
                        if crate::rules::search::is_dont_care(crate::rules::English, &p) {
                            *x = dc;
                        }
                    }
                }
                fill_neighbours(&mut v);
            }
            fill_majority(&mut v);
            if v.iter().all(|&x| x == v[0]) {
                return Ok(Enc {
                    data: Vec::new(),
                    constant: v[0] as u32,
                });
            }
            let packed = C::pack(&v);
            let data = CCTX.with(|c| {
                let mut c = c.borrow_mut();
                if c.as_ref().is_none_or(|(l, _)| *l != opts.level) {
                    let mut comp = zstd::bulk::Compressor::new(opts.level)?;
                    comp.include_checksum(false)?;
                    comp.include_contentsize(true)?;
                    comp.include_dictid(false)?;
                    *c = Some((opts.level, comp));
                }
                c.as_mut().unwrap().1.compress(&packed)
            });
            let data = data.map_err(|e| TableError::Invalid(format!("zstd: {e}")))?;
            Ok(Enc {
                data,
                constant: NO_CONST,
            })
        })
        .collect();
    let mut blocks = blocks?;
    // A slice whose values are all equal stores no blocks.
    let uniform = if !blocks.is_empty()
        && blocks
            .iter()
            .all(|b| b.constant != NO_CONST && b.constant == blocks[0].constant)
    {
        let u = blocks[0].constant;
        blocks.clear();
        u
    } else if blocks.is_empty() {
        1 // an empty slice; any value
    } else {
        NO_CONST
    };

    let n_blocks = blocks.len();
    if n_blocks > u32::MAX as usize {
        return Err(TableError::Invalid(format!("{n_blocks} blocks")));
    }
    let data_len: usize = blocks.iter().map(|b| b.data.len()).sum();
    // End offsets take 4 bytes while the data is under 4 GiB, else 8.
    let width: usize = if data_len as u64 <= u32::MAX as u64 {
        min_width
    } else {
        8
    };
    let table_len = n_blocks * (width + 4);
    let file_len = HEADER_LEN + table_len + data_len + 8;
    let mut out = Vec::with_capacity(file_len);
    let header = Header {
        kind: super::header::FileKind::Wld,
        version: FORMAT_VERSION as u8,
        rules: opts.rules as u8,
        codec: if cm {
            super::cm::CODEC_CM_THREATS as u8
        } else if cm6 {
            super::cm6::CODEC_CM_FILLED as u8
        } else {
            C::ID as u8
        },
        level: opts.level as u8,
        slice: meta.slice,
        uniform: (uniform != NO_CONST).then_some(uniform as u8),
        width: width as u8,
        block_positions: opts.block_positions,
        positions: meta.positions,
        wins: meta.wins,
        losses: meta.losses,
        longest: meta.longest,
        blocks: n_blocks as u32,
    };
    out.extend_from_slice(&header.to_bytes());
    let put32 = |o: &mut Vec<u8>, x: u32| o.extend_from_slice(&x.to_le_bytes());
    let put64 = |o: &mut Vec<u8>, x: u64| o.extend_from_slice(&x.to_le_bytes());
    put64(&mut out, 0); // 56: header checksum, filled below
    let mut end = 0u64;
    for b in &blocks {
        end += b.data.len() as u64;
        out.extend_from_slice(&end.to_le_bytes()[..width]);
        let check = if b.data.is_empty() {
            b.constant
        } else {
            xxh64(&b.data, 0) as u32
        };
        put32(&mut out, check);
    }
    let mut h = Xxh64::new(0);
    h.update(&out[..HEADER_SUMMED]);
    h.update(&out[HEADER_LEN..]);
    let hc = h.digest();
    out[HEADER_SUMMED..HEADER_LEN].copy_from_slice(&hc.to_le_bytes());
    for b in &blocks {
        out.extend_from_slice(&b.data);
    }
    let fc = xxh64(&out, 0);
    put64(&mut out, fc);
    debug_assert_eq!(out.len(), file_len);
    Ok(out)
}

/// The old writer for the codec of `opts` (as `encode_any` dispatched).
fn old_any(
    meta: &TableMeta,
    values: &[u8],
    dc: Option<&BitSlice<u64, Lsb0>>,
    opts: &WriteOptions,
    width: usize,
) -> Result<Vec<u8>, TableError> {
    match opts.codec {
        super::CODEC_2BIT_ZSTD => encode_old::<Wld2Bit>(meta, values, dc, opts, width),
        _ => encode_old::<Wld2BitThreats>(meta, values, dc, opts, width),
    }
}

/// Values 0..=2 of `n` positions: runs of one value (so some blocks are constant) and noise.
fn values(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let run = (next() % 700) as usize + 1;
        let v = (next() % 3) as u8;
        let noisy = next() % 2 == 0;
        for _ in 0..run.min(n - out.len()) {
            out.push(if noisy { (next() % 3) as u8 } else { v });
        }
    }
    out
}

#[test]
fn the_writer_writes_the_bytes_of_the_writer_before_the_split() {
    // Slices of 2 and 3 pieces with 200 to 100,000 positions, men and kings: every fifth.
    let slices: Vec<crate::slice::Slice> = crate::plan::build_order(3)
        .iter()
        .flat_map(|u| u.slices.clone())
        .filter(|s| (200..100_000).contains(&crate::index::SliceIndex::new(*s).size()))
        .step_by(5)
        .collect();
    assert!(slices.len() >= 4, "{slices:?}");
    let mut checked = 0;
    for (k, s) in slices.iter().enumerate() {
        let (s, name) = (*s, s.to_string());
        let n = crate::index::SliceIndex::new(s).size() as usize;
        for variant in 0..3u64 {
            let vals: Vec<u8> = match variant {
                0 => values(n, 7 + k as u64),
                1 => vec![2; n], // uniform
                _ => {
                    // constant blocks of two values: not uniform, no block stored
                    (0..n).map(|i| if i < n / 2 { 0 } else { 1 }).collect()
                }
            };
            let mask: BitVec<u64, Lsb0> = (0..n).map(|i| (i * 7919 + k) % 5 == 0).collect();
            let mut cnt = [0u64; 3];
            vals.iter().for_each(|&v| cnt[v as usize] += 1);
            let meta = TableMeta {
                slice: s,
                positions: n as u64,
                wins: cnt[2],
                losses: cnt[0],
                draws: cnt[1],
                longest: 11,
            };
            for codec in [2u32, 4, 5, 6] {
                for bp in [20u32, 100, 1000, super::write::DEFAULT_BLOCK_POSITIONS] {
                    for width in [4usize, 8] {
                        for dc in [None, Some(&mask[..])] {
                            let opts = WriteOptions {
                                codec,
                                block_positions: bp,
                                level: 3,
                                ..WriteOptions::default()
                            };
                            let want = old_any(&meta, &vals, dc, &opts, width);
                            let got = super::write::encode_masked_for_tests(
                                &meta, &vals, dc, &opts, width,
                            );
                            let what = format!("{name} variant {variant} codec {codec} blocks of {bp} width {width} mask {}", dc.is_some());
                            let (want, got) = match (want, got) {
                                (Ok(a), Ok(b)) => (a, b),
                                (Err(a), Err(b)) => {
                                    // Blocks are encoded in parallel: which failing block is
                                    // reported varies (in both writers), so not its index.
                                    let digits = |e: TableError| -> String {
                                        e.to_string()
                                            .chars()
                                            .filter(|c| !c.is_ascii_digit())
                                            .collect()
                                    };
                                    assert_eq!(digits(a), digits(b), "{what}");
                                    continue;
                                }
                                (a, b) => panic!("{what}: {a:?} against {b:?}"),
                            };
                            assert!(want == got, "{what}");
                            // In block ranges, laid out by `layout`: the same bytes.
                            let blocks = n.div_ceil(bp as usize);
                            let cuts = [0, blocks / 3, blocks / 3, blocks * 2 / 3, blocks];
                            let mut all = Vec::new();
                            for w in cuts.windows(2) {
                                let (a, b) = (w[0] * bp as usize, (w[1] * bp as usize).min(n));
                                let m = dc.map(|m| &m[a..b]);
                                all.extend(
                                    super::write::encode_blocks(s, a as u64, &vals[a..b], m, &opts)
                                        .unwrap(),
                                );
                            }
                            let infos: Vec<super::write::BlockInfo> =
                                all.iter().map(super::write::BlockInfo::from).collect();
                            let (mut out, with_data) =
                                super::write::layout(&meta, &infos, &opts, width).unwrap();
                            if with_data {
                                for b in &all {
                                    out.extend_from_slice(&b.data);
                                }
                            }
                            let fc = xxh64(&out, 0);
                            out.extend_from_slice(&fc.to_le_bytes());
                            assert!(out == want, "{what}, in ranges");
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 300, "{checked}");
}
