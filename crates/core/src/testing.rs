//! For tests that need something the machine may lack (a database server, a browser).

/// Where a missing dependency fails the test instead of skipping it: under CI (`CI` set) and under
/// `scripts/test.sh` (`OLTPLAB_REQUIRE_ALL=1`), which installs everything the tests need.
fn required(ci: Option<&str>, require_all: Option<&str>) -> bool {
    let on = |v: Option<&str>| v.is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
    on(ci) || on(require_all)
}

/// Says, visibly, that a test is skipped because `missing` (e.g. "MariaDB is not installed") —
/// or, where every dependency is required, fails the test with that reason.
pub fn skip(missing: &str) {
    let var = |k: &str| std::env::var(k).ok();
    if required(var("CI").as_deref(), var("OLTPLAB_REQUIRE_ALL").as_deref()) {
        panic!(
            "{missing}, and this run requires every test's dependencies (CI or scripts/test.sh)"
        );
    }
    eprintln!("\n!!! SKIPPED: {missing}\n");
}

#[cfg(test)]
mod tests {
    use super::required;

    #[test]
    fn ci_or_the_test_script_require_every_dependency() {
        assert!(!required(None, None));
        assert!(!required(Some(""), Some("0")));
        assert!(!required(Some("false"), None));
        assert!(required(Some("true"), None));
        assert!(required(None, Some("1")));
    }
}
