//! The device spec language's parser (the grammar is in `spec.rs`): text → a checked [`Spec`].
//! Errors say at which column what was expected; impossible specs are refused with the reason,
//! a device whose parameters its model cannot use among them (`model::check_device`). Above the
//! models, which read the parsed tree and never the parser.

use std::fmt;

use crate::catalogue::{self, CatalogueEntry, DeviceKind};
use crate::model;
use crate::params::{self, optional_params, CacheMode, CACHE_KEY, SECTOR_KEY};
use crate::spec::{
    format_size, RaidLevel, Role, Spec, DEFAULT_STRIPE_BYTES, DEFAULT_WBCACHE_BYTES,
    LAYOUT_DEVICES_MAX, LEAVES_MAX,
};

/// Longest spec text accepted; nobody types more, and it bounds the parser's work.
pub const SPEC_TEXT_MAX: usize = 1000;
/// Deepest nesting of compositions.
const DEPTH_MAX: usize = 8;
const COMPOSITIONS: &str = "raid0, raid1, raid10, raid5, wbcache, readcache, pagecache";

/// Longest table name a layout accepts.
const TABLE_NAME_MAX: usize = 63;

/// `wbcache(…)`'s arguments as given, each at most once.
#[derive(Default)]
struct WbCacheArgs {
    /// Where SIZE stands in the text, and its bytes.
    size: Option<(usize, u64)>,
    readahead: Option<Readahead>,
    cache: Option<CacheMode>,
}

/// `readahead=on|off|SIZE` as given.
#[derive(Clone, Copy)]
enum Readahead {
    /// `on`: a full stripe of the array behind, known once the backing is.
    FullStripe,
    /// `off` (0) or a chunk's bytes.
    Bytes(u64),
}

/// Why a spec was refused: where (1-based column, in characters) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub text: String,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "device spec '{}' at column {}: {}",
            self.text, self.column, self.message
        )
    }
}

impl std::error::Error for SpecError {}

/// Parses and validates a device spec such as `raid5(4,hdd-15k,stripe=64k)`.
pub fn parse_spec(text: &str) -> Result<Spec, SpecError> {
    if text.chars().count() > SPEC_TEXT_MAX {
        return Err(SpecError {
            text: text.chars().take(40).collect::<String>() + "…",
            column: SPEC_TEXT_MAX + 1,
            message: format!("a spec is at most {SPEC_TEXT_MAX} characters long"),
        });
    }
    let mut p = Parser {
        text,
        chars: text.chars().collect(),
        pos: 0,
    };
    let spec = if p.starts_layout() {
        p.layout()?
    } else {
        p.spec(0)?
    };
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(p.error(
            p.pos,
            format!(
                "unexpected '{}' after a complete spec; expected the end",
                p.chars[p.pos]
            ),
        ));
    }
    Ok(spec)
}

struct Parser<'a> {
    text: &'a str,
    chars: Vec<char>,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, at: usize, message: impl Into<String>) -> SpecError {
        SpecError {
            text: self.text.to_string(),
            column: at + 1,
            message: message.into(),
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.chars.len() && self.chars[self.pos].is_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).copied()
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), SpecError> {
        match self.peek() {
            Some(x) if x == c => {
                self.pos += 1;
                Ok(())
            }
            Some(x) => Err(self.error(self.pos, format!("expected {what}, found '{x}'"))),
            None => Err(self.error(self.pos, format!("expected {what}, found the end"))),
        }
    }

    /// A name: letters, digits, '-', '.', '_'.
    fn word(&mut self, what: &str) -> Result<(usize, String), SpecError> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.chars.len()
            && (self.chars[self.pos].is_ascii_alphanumeric()
                || matches!(self.chars[self.pos], '-' | '.' | '_'))
        {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(match self.chars.get(start) {
                Some(c) => self.error(start, format!("expected {what}, found '{c}'")),
                None => self.error(start, format!("expected {what}, found the end")),
            });
        }
        Ok((start, self.chars[start..self.pos].iter().collect()))
    }

    fn spec(&mut self, depth: usize) -> Result<Spec, SpecError> {
        let (at, name) = self.word("a device name or a composition such as raid5(4,hdd-15k)")?;
        if depth >= DEPTH_MAX {
            return Err(self.error(at, format!("compositions nest at most {DEPTH_MAX} deep")));
        }
        let level = match name.as_str() {
            "raid0" => Some(RaidLevel::Raid0),
            "raid1" => Some(RaidLevel::Raid1),
            "raid10" => Some(RaidLevel::Raid10),
            "raid5" => Some(RaidLevel::Raid5),
            _ => None,
        };
        let spec = if let Some(level) = level {
            self.raid(at, level, depth)?
        } else {
            match name.as_str() {
                "wbcache" => self.wbcache(at, depth)?,
                "readcache" => self.readcache(at, depth)?,
                "pagecache" => self.pagecache(at, depth)?,
                _ => self.device(at, &name)?,
            }
        };
        if spec.leaves() > LEAVES_MAX {
            return Err(self.error(
                at,
                format!(
                    "this spec has {} physical devices; at most {LEAVES_MAX} are emulated",
                    spec.leaves()
                ),
            ));
        }
        Ok(spec)
    }

    /// True when the text begins with `WORD=` or `table:`: a layout, not a device.
    fn starts_layout(&mut self) -> bool {
        self.skip_ws();
        let mut i = self.pos;
        while i < self.chars.len()
            && (self.chars[i].is_ascii_alphanumeric() || matches!(self.chars[i], '-' | '.' | '_'))
        {
            i += 1;
        }
        i > self.pos && matches!(self.chars.get(i), Some('=') | Some(':'))
    }

    fn layout(&mut self) -> Result<Spec, SpecError> {
        let mut roles: Vec<(Role, u8)> = Vec::new();
        let mut devices: Vec<Spec> = Vec::new();
        loop {
            let (at, word) = self.word("a role: data, log, temp or table:NAME")?;
            let role = match word.as_str() {
                "data" => Role::Data,
                "log" => Role::Log,
                "temp" => Role::Temp,
                "table" => {
                    self.expect(':', "':' and the table's name, as in table:stock")?;
                    let (name_at, name) = self.word("a table name")?;
                    if name.len() > TABLE_NAME_MAX
                        || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        return Err(self.error(name_at, format!("'{name}' is not a table name: use letters, digits and '_', at most {TABLE_NAME_MAX}")));
                    }
                    Role::Table(name.to_ascii_lowercase())
                }
                _ => {
                    return Err(self.error(
                        at,
                        format!("unknown role '{word}'; a layout's roles are data, log, temp and table:NAME"),
                    ))
                }
            };
            if roles.iter().any(|(r, _)| *r == role) {
                return Err(self.error(
                    at,
                    format!(
                        "the role {} is given twice; give each role once",
                        role.name()
                    ),
                ));
            }
            self.expect('=', "'=' and the role's device")?;
            let (spec_at, spec) = self.composable(1)?;
            let index = match devices.iter().position(|d| d.name() == spec.name()) {
                Some(i) => i,
                None if devices.len() >= LAYOUT_DEVICES_MAX => {
                    return Err(self.error(
                        spec_at,
                        format!("a layout has at most {LAYOUT_DEVICES_MAX} devices"),
                    ))
                }
                None => {
                    devices.push(spec);
                    devices.len() - 1
                }
            };
            roles.push((role, index as u8));
            match self.peek() {
                Some(',') => self.pos += 1,
                None => break,
                Some(c) => {
                    return Err(self.error(
                        self.pos,
                        format!("expected ',' and the next role, found '{c}'"),
                    ))
                }
            }
        }
        let Some(data) = roles.iter().position(|(r, _)| *r == Role::Data) else {
            return Err(self.error(0, "a layout names the data device: add data=SPEC, as in data=raid10(16,hdd-15k),log=pcie-flash-2012"));
        };
        // Data first, and its device first: the order results and placement rely on.
        let data_role = roles.remove(data);
        roles.insert(0, data_role);
        let order: Vec<u8> = {
            let mut o: Vec<u8> = Vec::new();
            for (_, d) in &roles {
                if !o.contains(d) {
                    o.push(*d);
                }
            }
            o
        };
        let devices: Vec<Spec> = order.iter().map(|&d| devices[d as usize].clone()).collect();
        let roles = roles
            .into_iter()
            .map(|(r, d)| (r, order.iter().position(|&o| o == d).unwrap_or(0) as u8))
            .collect();
        let layout = Spec::Layout { roles, devices };
        if layout.leaves() > LEAVES_MAX {
            return Err(self.error(
                0,
                format!(
                    "this layout has {} physical devices; at most {LEAVES_MAX} are emulated",
                    layout.leaves()
                ),
            ));
        }
        Ok(layout)
    }

    fn device(&mut self, at: usize, name: &str) -> Result<Spec, SpecError> {
        let Some(entry) = catalogue::lookup(name) else {
            return Err(self.error(
                at,
                format!(
                    "unknown device '{name}'; the catalogue has {} (see `oltplab devices`), and compositions are {COMPOSITIONS}",
                    catalogue::names()
                ),
            ));
        };
        let mut overrides: Vec<(&'static str, f64)> = Vec::new();
        if self.peek() == Some('{') {
            self.pos += 1;
            loop {
                let (key_at, key) = self.word("a parameter name")?;
                if key == CACHE_KEY || key == SECTOR_KEY {
                    let (k, value) = self.durability_arg(entry, key_at, &key)?;
                    if overrides.iter().any(|(o, _)| *o == k) {
                        return Err(self.error(key_at, format!("'{key}' is given twice")));
                    }
                    overrides.push((k, value));
                    match self.peek() {
                        Some(',') => {
                            self.pos += 1;
                            continue;
                        }
                        Some('}') => {
                            self.pos += 1;
                            break;
                        }
                        Some(c) => {
                            return Err(
                                self.error(self.pos, format!("expected ',' or '}}', found '{c}'"))
                            )
                        }
                        None => {
                            return Err(self.error(self.pos, "expected ',' or '}', found the end"))
                        }
                    }
                }
                let Some(param) = entry
                    .params
                    .iter()
                    .chain(optional_params(entry.kind))
                    .find(|p| p.key == key)
                else {
                    let keys: Vec<_> = entry
                        .params
                        .iter()
                        .chain(optional_params(entry.kind))
                        .map(|p| p.key)
                        .collect();
                    let known = if keys.is_empty() {
                        "it has no parameters".to_string()
                    } else {
                        format!("its parameters are {}", keys.join(", "))
                    };
                    return Err(
                        self.error(key_at, format!("{name} has no parameter '{key}'; {known}"))
                    );
                };
                self.expect('=', "'=' and a value")?;
                let value = match self.switch() {
                    Some(on) => on,
                    None => self.number()?.1,
                };
                if overrides.iter().any(|(k, _)| *k == param.key) {
                    return Err(self.error(key_at, format!("'{key}' is given twice")));
                }
                overrides.push((param.key, value));
                match self.peek() {
                    Some(',') => self.pos += 1,
                    Some('}') => {
                        self.pos += 1;
                        break;
                    }
                    Some(c) => {
                        return Err(
                            self.error(self.pos, format!("expected ',' or '}}', found '{c}'"))
                        )
                    }
                    None => return Err(self.error(self.pos, "expected ',' or '}', found the end")),
                }
            }
            // Catalogue order, then the optional parameters, then cache and sector.
            overrides.sort_by_key(|(k, _)| {
                entry
                    .params
                    .iter()
                    .chain(optional_params(entry.kind))
                    .position(|p| p.key == *k)
                    .unwrap_or(usize::MAX - usize::from(*k == CACHE_KEY))
            });
        }
        if self.peek() == Some('(') {
            return Err(self.error(self.pos, format!("{name} is a device, not a composition, so it takes no '(…)'; compositions are {COMPOSITIONS}")));
        }
        let spec = Spec::Device { entry, overrides };
        if let Err(why) = model::check_device(&spec) {
            return Err(self.error(at, why));
        }
        Ok(spec)
    }

    /// `cache=MODE` or `sector=SIZE` of a device, with `key` read: the override it stores.
    fn durability_arg(
        &mut self,
        entry: &CatalogueEntry,
        key_at: usize,
        key: &str,
    ) -> Result<(&'static str, f64), SpecError> {
        if entry.kind == DeviceKind::Host {
            return Err(self.error(key_at, format!("host is the real device, so its '{key}' is the real one; emulate a device such as hdd-15k to choose it")));
        }
        self.expect('=', "'=' and a value")?;
        if key == CACHE_KEY {
            let (at, word) = self.word("a cache mode: off, volatile, lying or battery")?;
            let Some(mode) = CacheMode::from_name(&word) else {
                return Err(self.error(
                    at,
                    format!("unknown cache mode '{word}'; use off, volatile, lying or battery"),
                ));
            };
            if entry.kind == DeviceKind::Ram && mode != CacheMode::Off {
                return Err(self.error(at, format!("{} has no write cache to lose, so its cache is off; use a drive such as sata-ssd-2010 for cache={word}", entry.name)));
            }
            Ok((CACHE_KEY, mode.code()))
        } else {
            let (at, word) = self.word("a sector size: 512 or 4k")?;
            match params::parse_sector(&word) {
                Some(v) => Ok((SECTOR_KEY, v as f64)),
                None => Err(self.error(
                    at,
                    format!("a sector is 512 or 4k (the atomic unit of a write), not '{word}'"),
                )),
            }
        }
    }

    /// `on` or `off` as 1 or 0, for switches such as an HDD's `write_cache`.
    fn switch(&mut self) -> Option<f64> {
        self.skip_ws();
        for (word, value) in [("on", 1.0), ("off", 0.0)] {
            let end = self.pos + word.len();
            if end <= self.chars.len()
                && self.chars[self.pos..end].iter().collect::<String>() == word
                && !self.chars.get(end).is_some_and(|c| c.is_alphanumeric())
            {
                self.pos = end;
                return Some(value);
            }
        }
        None
    }

    fn number(&mut self) -> Result<(usize, f64), SpecError> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.chars.len()
            && (self.chars[self.pos].is_ascii_digit()
                || matches!(self.chars[self.pos], '.' | 'e' | 'E' | '+' | '-'))
        {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok((start, v)),
            _ => Err(self.error(
                start,
                format!(
                    "expected a non-negative number, found '{}'",
                    self.found(start)
                ),
            )),
        }
    }

    fn found(&self, at: usize) -> String {
        let s: String = self.chars[at..].iter().take(12).collect();
        if s.is_empty() {
            "the end".into()
        } else {
            s
        }
    }

    fn count(&mut self, what: &str) -> Result<(usize, u32), SpecError> {
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.chars.len() && self.chars[self.pos].is_ascii_digit() {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        text.parse::<u32>().map(|n| (start, n)).map_err(|_| {
            self.error(
                start,
                format!("expected {what}, found '{}'", self.found(start)),
            )
        })
    }

    /// `key=SIZE`, with `key` already known to be next.
    fn size_arg(&mut self, key: &str) -> Result<(usize, u64), SpecError> {
        self.expect('=', &format!("'=' after {key}"))?;
        self.skip_ws();
        let start = self.pos;
        while self.pos < self.chars.len() && self.chars[self.pos].is_ascii_alphanumeric() {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        match oltplab_core::units::parse_size(&text) {
            Ok(v) if v > 0 => Ok((start, v)),
            _ => Err(self.error(
                start,
                format!(
                    "expected a size such as 64k or 1g for {key}, found '{}'",
                    self.found(start)
                ),
            )),
        }
    }

    /// The optional `,key=SIZE` arguments that may follow; returns them with their columns.
    fn keyword_args(&mut self, allowed: &[&str]) -> Result<Vec<(String, usize, u64)>, SpecError> {
        let mut out: Vec<(String, usize, u64)> = Vec::new();
        loop {
            match self.peek() {
                Some(')') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(',') => {
                    self.pos += 1;
                    let (at, key) = self.word(&format!("one of {}", allowed.join(", ")))?;
                    if !allowed.contains(&key.as_str()) {
                        return Err(self.error(
                            at,
                            format!(
                                "unknown argument '{key}'; expected {}",
                                allowed.join(" or ")
                            ),
                        ));
                    }
                    if out.iter().any(|(k, _, _)| *k == key) {
                        return Err(self.error(at, format!("'{key}' is given twice")));
                    }
                    let (vat, v) = self.size_arg(&key)?;
                    out.push((key, vat, v));
                }
                Some(c) => {
                    return Err(self.error(self.pos, format!("expected ',' or ')', found '{c}'")))
                }
                None => return Err(self.error(self.pos, "expected ',' or ')', found the end")),
            }
        }
    }

    fn composable(&mut self, depth: usize) -> Result<(usize, Spec), SpecError> {
        self.skip_ws();
        let at = self.pos;
        let spec = self.spec(depth + 1)?;
        if spec.is_host() {
            return Err(self.error(at, "host is the real device and cannot be part of a composition; use an emulated device such as hdd-15k"));
        }
        Ok((at, spec))
    }

    fn raid(&mut self, at: usize, level: RaidLevel, depth: usize) -> Result<Spec, SpecError> {
        let name = level.name();
        self.expect('(', &format!("'(' after {name}, as in {name}(4,hdd-15k)"))?;
        let (n_at, disks) = self.count("the number of disks")?;
        let (min, rule) = match level {
            RaidLevel::Raid0 => (2, "raid0 needs at least 2 disks"),
            RaidLevel::Raid1 => (2, "raid1 needs at least 2 disks"),
            RaidLevel::Raid10 => (4, "raid10 needs an even number of disks, at least 4"),
            RaidLevel::Raid5 => (
                3,
                "raid5 needs at least 3 disks (2 would leave no room for parity)",
            ),
        };
        if disks < min || (level == RaidLevel::Raid10 && disks % 2 != 0) {
            return Err(self.error(n_at, format!("{rule}, not {disks}")));
        }
        if disks > 64 {
            return Err(self.error(n_at, format!("{name} takes at most 64 disks, not {disks}")));
        }
        self.expect(',', "',' and the member device")?;
        let (_, member) = self.composable(depth)?;
        let allowed: &[&str] = if level == RaidLevel::Raid1 {
            &[]
        } else {
            &["stripe"]
        };
        let args = self.keyword_args(allowed)?;
        let mut stripe_bytes = DEFAULT_STRIPE_BYTES;
        if let Some((_, s_at, v)) = args.into_iter().next() {
            if !v.is_power_of_two() || !((4 << 10)..=(16 << 20)).contains(&v) {
                return Err(self.error(
                    s_at,
                    format!(
                        "the stripe size must be a power of two from 4k to 16m, not {}",
                        format_size(v)
                    ),
                ));
            }
            stripe_bytes = v;
        }
        let _ = at;
        Ok(Spec::Raid {
            level,
            disks,
            member: Box::new(member),
            stripe_bytes,
        })
    }

    fn wbcache(&mut self, at: usize, depth: usize) -> Result<Spec, SpecError> {
        self.expect(
            '(',
            "'(' after wbcache, as in wbcache(raid5(4,hdd-15k),size=1g)",
        )?;
        let (_, backing) = self.composable(depth)?;
        let args = self.wbcache_args()?;
        let (size_at, size_bytes) = args.size.unwrap_or((at, DEFAULT_WBCACHE_BYTES));
        // readahead=on reads a full stripe of the array behind at a time; SIZE gives the chunk.
        let readahead_bytes = match args.readahead {
            Some(Readahead::FullStripe) => backing.full_stripe_bytes(),
            Some(Readahead::Bytes(v)) => v,
            None => 0,
        };
        if size_bytes > backing.capacity_bytes() {
            return Err(self.error(
                size_at,
                format!(
                    "a {} write cache is larger than its {} backing device; choose a smaller size",
                    format_size(size_bytes),
                    format_size(backing.capacity_bytes())
                ),
            ));
        }
        let cache = args.cache.unwrap_or(CacheMode::Battery);
        Ok(Spec::WbCache {
            backing: Box::new(backing),
            size_bytes,
            readahead_bytes,
            cache,
        })
    }

    /// wbcache's `,size=SIZE` and `,readahead=on|off|SIZE`, each at most once, up to the ')'.
    fn wbcache_args(&mut self) -> Result<WbCacheArgs, SpecError> {
        let mut out = WbCacheArgs::default();
        loop {
            match self.peek() {
                Some(')') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(',') => {
                    self.pos += 1;
                    let (at, key) = self.word("size, readahead or cache")?;
                    if key != "size" && key != "readahead" && key != CACHE_KEY {
                        return Err(self.error(
                            at,
                            format!("unknown argument '{key}'; expected size, readahead or cache"),
                        ));
                    }
                    let given = match key.as_str() {
                        "size" => out.size.is_some(),
                        "readahead" => out.readahead.is_some(),
                        _ => out.cache.is_some(),
                    };
                    if given {
                        return Err(self.error(at, format!("'{key}' is given twice")));
                    }
                    if key == CACHE_KEY {
                        self.expect('=', "'=' after cache")?;
                        let (vat, word) = self.word("battery, volatile or lying")?;
                        match CacheMode::from_name(&word) {
                            Some(CacheMode::Off) => return Err(self.error(vat, "a write-back cache cannot be off; leave wbcache(…) out for a controller without one")),
                            Some(mode) => out.cache = Some(mode),
                            None => return Err(self.error(vat, format!("unknown cache mode '{word}'; a controller's cache is battery, volatile or lying"))),
                        }
                    } else if key == "readahead" {
                        let save = self.pos;
                        self.expect('=', "'=' after readahead")?;
                        let (vat, word) = self.word("on, off or a size such as 256k")?;
                        match word.as_str() {
                            "on" => out.readahead = Some(Readahead::FullStripe),
                            "off" => out.readahead = Some(Readahead::Bytes(0)),
                            w if !matches!(oltplab_core::units::parse_size(w), Ok(v) if v > 0) => {
                                return Err(self.error(
                                    vat,
                                    format!("expected on, off or a size such as 256k for readahead, found '{w}'"),
                                ));
                            }
                            _ => {
                                self.pos = save;
                                let (vat, v) = self.size_arg("readahead")?;
                                if v > (64 << 20) {
                                    return Err(self.error(
                                        vat,
                                        format!(
                                            "a read-ahead chunk is at most 64m, not {}",
                                            format_size(v)
                                        ),
                                    ));
                                }
                                out.readahead = Some(Readahead::Bytes(v));
                            }
                        }
                    } else {
                        out.size = Some(self.size_arg(&key)?);
                    }
                }
                Some(c) => {
                    return Err(self.error(self.pos, format!("expected ',' or ')', found '{c}'")))
                }
                None => return Err(self.error(self.pos, "expected ',' or ')', found the end")),
            }
        }
    }

    fn readcache(&mut self, at: usize, depth: usize) -> Result<Spec, SpecError> {
        self.expect(
            '(',
            "'(' after readcache, as in readcache(raid10(16,hdd-15k),sas-ssd-2012,size=100g)",
        )?;
        let (_, backing) = self.composable(depth)?;
        self.expect(',', "',' and the cache device")?;
        let (cache_at, cache) = self.composable(depth)?;
        let args = self.keyword_args(&["size"])?;
        let (size_at, size_bytes) = args
            .first()
            .map(|(_, a, v)| (*a, *v))
            .unwrap_or((cache_at, cache.capacity_bytes()));
        if size_bytes > cache.capacity_bytes() {
            return Err(self.error(
                size_at,
                format!(
                    "a {} read cache does not fit on its {} cache device; choose a smaller size",
                    format_size(size_bytes),
                    format_size(cache.capacity_bytes())
                ),
            ));
        }
        if size_bytes >= backing.capacity_bytes() {
            return Err(self.error(size_at, format!("a {} read cache is as large as its {} backing device, so nothing would be read from the backing; choose a smaller size", format_size(size_bytes), format_size(backing.capacity_bytes()))));
        }
        let _ = at;
        Ok(Spec::ReadCache {
            backing: Box::new(backing),
            cache: Box::new(cache),
            size_bytes,
        })
    }

    fn pagecache(&mut self, at: usize, depth: usize) -> Result<Spec, SpecError> {
        self.expect('(', "'(' after pagecache, as in pagecache(hdd-15k,size=4g)")?;
        let (_, backing) = self.composable(depth)?;
        let args = self.keyword_args(&["size"])?;
        let Some((_, size_at, size_bytes)) = args.into_iter().next() else {
            return Err(self.error(
                at,
                "pagecache needs a size, as in pagecache(hdd-15k,size=4g)",
            ));
        };
        if size_bytes >= backing.capacity_bytes() {
            return Err(self.error(
                size_at,
                format!(
                    "a {} page cache is as large as its {} backing device; choose a smaller size",
                    format_size(size_bytes),
                    format_size(backing.capacity_bytes())
                ),
            ));
        }
        Ok(Spec::PageCache {
            backing: Box::new(backing),
            size_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> SpecError {
        parse_spec(text).unwrap_err()
    }

    #[test]
    fn canonical_names_round_trip() {
        for (text, canonical) in [
            ("hdd-15k", "hdd-15k"),
            (" raid5( 4 , hdd-15k ) ", "raid5(4,hdd-15k,stripe=64k)"),
            (
                "raid10(4,sas-ssd-2012,stripe=256k)",
                "raid10(4,sas-ssd-2012,stripe=256k)",
            ),
            ("raid1(2,hdd-10k)", "raid1(2,hdd-10k)"),
            (
                "wbcache(raid5(4,hdd-15k))",
                "wbcache(raid5(4,hdd-15k,stripe=64k),size=1g)",
            ),
            (
                "readcache(raid10(16,hdd-15k),sas-ssd-2012,size=100g)",
                "readcache(raid10(16,hdd-15k,stripe=64k),sas-ssd-2012,size=100g)",
            ),
            ("pagecache(hdd-7.2k,size=4g)", "pagecache(hdd-7.2k,size=4g)"),
            ("hdd-15k{rpm=10000}", "hdd-15k{rpm=10000}"),
            (
                "hdd-15k{queue_max=1,rpm=7200}",
                "hdd-15k{rpm=7200,queue_max=1}",
            ),
        ] {
            let spec = parse_spec(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(spec.name(), canonical);
            assert_eq!(parse_spec(&spec.name()).unwrap(), spec);
        }
    }

    /// The RAID controller's read-ahead: on reads a full stripe of the array behind, off or a size.
    #[test]
    fn wbcache_readahead() {
        for (text, canonical) in [
            (
                "wbcache(raid5(4,hdd-15k),readahead=on)",
                "wbcache(raid5(4,hdd-15k,stripe=64k),size=1g,readahead=192k)",
            ),
            (
                "wbcache(raid10(16,hdd-15k,stripe=128k),readahead=on,size=512m)",
                "wbcache(raid10(16,hdd-15k,stripe=128k),size=512m,readahead=1m)",
            ),
            (
                "wbcache(hdd-15k,readahead=on)",
                "wbcache(hdd-15k,size=1g,readahead=64k)",
            ),
            (
                "wbcache(raid1(2,hdd-15k),readahead=on)",
                "wbcache(raid1(2,hdd-15k),size=1g,readahead=64k)",
            ),
            (
                "wbcache(hdd-15k,size=1g,readahead=off)",
                "wbcache(hdd-15k,size=1g)",
            ),
            (
                "wbcache(hdd-15k,readahead=256k)",
                "wbcache(hdd-15k,size=1g,readahead=256k)",
            ),
        ] {
            let spec = parse_spec(text).unwrap();
            assert_eq!(spec.name(), canonical, "{text}");
            assert_eq!(parse_spec(canonical).unwrap(), spec, "{canonical}");
        }
        for (text, says) in [
            (
                "wbcache(hdd-15k,readahead=maybe)",
                "expected on, off or a size",
            ),
            ("wbcache(hdd-15k,readahead=on,readahead=off)", "given twice"),
            ("wbcache(hdd-15k,readahead=128m)", "at most 64m"),
            ("wbcache(hdd-15k,prefetch=on)", "size, readahead or cache"),
        ] {
            let e = err(text);
            assert!(e.to_string().contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn capacities() {
        assert_eq!(
            parse_spec("hdd-15k").unwrap().capacity_bytes(),
            600_000_000_000
        );
        assert_eq!(
            parse_spec("raid5(4,hdd-15k)").unwrap().capacity_bytes(),
            1_800_000_000_000
        );
        assert_eq!(
            parse_spec("raid10(4,hdd-15k)").unwrap().capacity_bytes(),
            1_200_000_000_000
        );
        assert_eq!(
            parse_spec("raid1(3,hdd-15k)").unwrap().capacity_bytes(),
            600_000_000_000
        );
        assert!(parse_spec("host").unwrap().is_host());
        assert!(!parse_spec("ram").unwrap().is_host());
    }

    #[test]
    fn errors_say_where_and_what() {
        let e = err("hdd");
        assert_eq!(e.column, 1);
        assert!(
            e.message.contains("hdd-15k") && e.message.contains("raid5"),
            "{e}"
        );
        let e = err("raid5(2,hdd-15k)");
        assert_eq!(e.column, 7);
        assert!(e.message.contains("parity"), "{e}");
        let e = err("raid5(4,hdd-15k");
        assert_eq!(e.column, 16);
        assert!(e.to_string().contains("expected ',' or ')'"), "{e}");
        let e = err("hdd-15k{rmp=1}");
        assert_eq!(e.column, 9);
        assert!(e.message.contains("rpm"), "{e}");
        let e = err("wbcache(hdd-15k,size=1t)");
        assert!(e.message.contains("larger than"), "{e}");
        let e = err("readcache(hdd-15k,sas-ssd-2012,size=500g)");
        assert!(e.message.contains("does not fit"), "{e}");
        let e = err("raid0(2,host)");
        assert!(e.message.contains("host"), "{e}");
        let e = err("raid5(4,hdd-15k,stripe=3k)");
        assert!(e.message.contains("power of two"), "{e}");
        let e = err("hdd-15k{rpm=0}");
        assert!(e.message.contains("rpm"), "{e}");
        let e = err("pagecache(hdd-15k)");
        assert!(e.message.contains("needs a size"), "{e}");
        let e = err("hdd-15k(2)");
        assert!(e.message.contains("not a composition"), "{e}");
        let e = err("raid0(64,raid0(64,hdd-15k))");
        assert!(e.message.contains("at most"), "{e}");
        let e = err("");
        assert_eq!(e.column, 1);
    }

    /// Random garbage — and random mutations of good specs — never panic.
    #[test]
    fn garbage_never_panics() {
        let alphabet: Vec<char> = "raid0151(),=hdd-15k{}ssd sizestripe wbcache readcache pagecache 0123456789kmgt.-_é\u{0}".chars().collect();
        let good = [
            "raid5(4,hdd-15k,stripe=64k)",
            "readcache(raid10(16,hdd-15k),sas-ssd-2012,size=100g)",
            "hdd-15k{rpm=10000}",
            "wbcache(pagecache(hdd-10k,size=1g),size=64m)",
        ];
        let mut x: u64 = 0x1234_5678_9abc_def1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // A smoke run (20,000 parses took 11 s of a debug test run): tests/spec_props.rs
        // explores the grammar and garbage far more widely.
        for i in 0..2_000 {
            let text: String = if i % 2 == 0 {
                let len = (next() % 40) as usize;
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect()
            } else {
                let mut chars: Vec<char> = good[(next() % 4) as usize].chars().collect();
                for _ in 0..(1 + next() % 3) {
                    let at = (next() % chars.len() as u64) as usize;
                    match next() % 3 {
                        0 => {
                            chars.remove(at);
                        }
                        1 => chars.insert(at, alphabet[(next() % alphabet.len() as u64) as usize]),
                        _ => chars[at] = alphabet[(next() % alphabet.len() as u64) as usize],
                    }
                    if chars.is_empty() {
                        break;
                    }
                }
                chars.into_iter().collect()
            };
            match parse_spec(&text) {
                Ok(spec) => assert_eq!(parse_spec(&spec.name()).unwrap(), spec, "{text}"),
                Err(e) => {
                    assert!(
                        e.column >= 1 && e.column <= text.chars().count() + 1,
                        "{text}: {e}"
                    );
                    assert!(!e.message.is_empty());
                }
            }
        }
    }
}
