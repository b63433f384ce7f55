//! Property tests of the device spec parser: any text — garbage, or the grammar with huge
//! numbers, deep nesting and unbalanced parentheses — gives a spec whose canonical name parses
//! back to it, or an error at a column of the text; never a panic, and nesting stays bounded.

use oltplab_devmodel::{catalogue, parse_spec, Spec};
use proptest::prelude::*;

/// The result of `text`: a spec that round-trips through its name, or an error pointing into it.
fn check(text: &str) -> Result<Spec, String> {
    match parse_spec(text) {
        Ok(spec) => {
            let name = spec.name();
            let again = parse_spec(&name).map_err(|e| format!("{name} does not parse: {e}"))?;
            if again != spec {
                return Err(format!("{text} → {name} → {again:?}"));
            }
            Ok(spec)
        }
        Err(e) => {
            let len = text.chars().count();
            assert!(
                (1..=len.max(oltplab_devmodel::parser::SPEC_TEXT_MAX) + 1).contains(&e.column),
                "{text}: {e}"
            );
            assert!(!e.message.is_empty(), "{text}");
            assert!(
                e.to_string().starts_with("device spec '"),
                "one sentence naming the spec: {e}"
            );
            Ok(Spec::Device {
                entry: catalogue::lookup("host").unwrap(),
                overrides: Vec::new(),
            })
        }
    }
}

fn device() -> impl Strategy<Value = String> {
    let names: Vec<&'static str> = catalogue().iter().map(|e| e.name).collect();
    prop::sample::select(names).prop_map(str::to_string)
}

/// A number as text, from ordinary to absurd.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..100u32).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|v| format!("{v}")),
        any::<f64>().prop_map(|v| format!("{v:e}")),
        prop::sample::select(vec![
            "1e308",
            "1e309",
            "1e-320",
            "-1",
            "0",
            "nan",
            "inf",
            "4294967296",
            "99999999999999999999999",
            "1e-300",
            ".5",
            "1..2",
        ])
        .prop_map(str::to_string),
    ]
}

fn size() -> impl Strategy<Value = String> {
    (
        number(),
        prop::sample::select(vec!["", "k", "m", "g", "t", "x", "kib"]),
    )
        .prop_map(|(n, unit)| format!("{n}{unit}"))
}

/// Overrides `{key=value,…}` with keys of any device (so some are unknown here).
fn overrides() -> impl Strategy<Value = String> {
    let keys: Vec<&'static str> = catalogue()
        .iter()
        .flat_map(|e| e.params.iter().map(|p| p.key))
        .collect();
    prop::collection::vec(
        (
            prop::sample::select(keys),
            prop_oneof![number(), Just("on".to_string()), Just("off".to_string())],
        ),
        0..4,
    )
    .prop_map(|kv| {
        if kv.is_empty() {
            String::new()
        } else {
            let list: Vec<String> = kv.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{{{}}}", list.join(","))
        }
    })
}

/// Specs from the grammar, nested, with hostile numbers in every slot.
fn grammar() -> impl Strategy<Value = String> {
    let leaf = (device(), overrides()).prop_map(|(d, o)| format!("{d}{o}"));
    leaf.prop_recursive(6, 48, 2, |inner| {
        prop_oneof![
            (
                prop::sample::select(vec!["raid0", "raid1", "raid10", "raid5"]),
                prop_oneof![(0..20u32).prop_map(|n| n.to_string()), number()],
                inner.clone(),
                prop::option::of(size()),
            )
                .prop_map(|(level, n, member, stripe)| match stripe {
                    Some(s) => format!("{level}({n},{member},stripe={s})"),
                    None => format!("{level}({n},{member})"),
                }),
            (
                prop::sample::select(vec!["wbcache", "pagecache"]),
                inner.clone(),
                prop::option::of(size()),
            )
                .prop_map(|(c, backing, s)| match s {
                    Some(s) => format!("{c}({backing},size={s})"),
                    None => format!("{c}({backing})"),
                }),
            (inner.clone(), inner, prop::option::of(size())).prop_map(|(b, c, s)| match s {
                Some(s) => format!("readcache({b},{c},size={s})"),
                None => format!("readcache({b},{c})"),
            }),
        ]
    })
}

/// Grammar text with a few characters deleted, doubled or replaced by a bracket.
fn mutated() -> impl Strategy<Value = String> {
    (
        grammar(),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                0..3u8,
                prop::sample::select(vec!['(', ')', ',', '{', '}', '=', ' ', 'é']),
            ),
            1..4,
        ),
    )
        .prop_map(|(text, edits)| {
            let mut chars: Vec<char> = text.chars().collect();
            for (at, how, c) in edits {
                if chars.is_empty() {
                    break;
                }
                let i = at.index(chars.len());
                match how {
                    0 => {
                        chars.remove(i);
                    }
                    1 => chars.insert(i, chars[i]),
                    _ => chars[i] = c,
                }
            }
            chars.into_iter().collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_text_parses_or_points_at_a_column(text in "\\PC{0,80}") {
        check(&text).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn grammar_with_hostile_numbers_parses_or_points_at_a_column(text in grammar()) {
        check(&text).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn damaged_grammar_parses_or_points_at_a_column(text in mutated()) {
        check(&text).map_err(TestCaseError::fail)?;
    }

    /// Nesting of any depth, balanced or not: refused beyond the limit, without recursing deeper.
    #[test]
    fn deep_nesting_is_bounded(
        depth in 0..400usize,
        opener in prop::sample::select(vec!["raid1(2,", "wbcache(", "pagecache(", "readcache(hdd-15k,", "(", "raid0(2,raid0("]),
        closed in any::<bool>(),
    ) {
        let text = format!(
            "{}hdd-15k{}",
            opener.repeat(depth),
            if closed { ")".repeat(depth) } else { String::new() }
        );
        let spec = check(&text).map_err(TestCaseError::fail)?;
        if depth > 8 && text.chars().count() <= oltplab_devmodel::parser::SPEC_TEXT_MAX {
            let e = parse_spec(&text).unwrap_err();
            prop_assert!(spec.is_host());
            prop_assert!(e.column <= text.chars().count() + 1, "{}", e);
        }
    }
}

/// Numbers at the edges of f64 keep their canonical name short enough to parse again: `1e300`
/// was written out as a 301-digit number, and three of them made a name over the spec limit.
#[test]
fn extreme_overrides_keep_a_parsable_name() {
    for text in [
        "hdd-15k{capacity_gb=1e300,rpm=1e300,media_outer_mb_s=1e300,link_mb_s=1e300}",
        "hdd-15k{seek_track_ms=1e-300,seek_avg_ms=1e-299,seek_full_ms=1e-298}",
        "hdd-15k{rpm=1.7976931348623157e308}",
        "hdd-15k{rpm=5e-324}",
    ] {
        match parse_spec(text) {
            Ok(spec) => {
                let name = spec.name();
                assert!(name.len() < 200, "{name}");
                assert_eq!(parse_spec(&name).unwrap(), spec, "{text}");
            }
            Err(e) => assert!(!e.message.is_empty(), "{text}"),
        }
    }
    let four =
        parse_spec("hdd-15k{capacity_gb=1e300,rpm=1e300,media_outer_mb_s=1e300,link_mb_s=1e300}")
            .unwrap();
    assert_eq!(
        four.name(),
        "hdd-15k{capacity_gb=1e300,rpm=1e300,media_outer_mb_s=1e300,link_mb_s=1e300}"
    );
    // Ordinary values keep their plain form.
    let plain = parse_spec("hdd-15k{rpm=10000,seek_avg_ms=3.4}").unwrap();
    assert_eq!(plain.name(), "hdd-15k{rpm=10000,seek_avg_ms=3.4}");
}
