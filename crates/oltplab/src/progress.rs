//! What the user sees while work runs: a live progress line on a terminal (indicatif); when stderr is
//! not a terminal (CI, pipes), or with `--quiet`, it stays hidden and callers print one line per
//! finished step (unless quiet).

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A bar counting `total` units (milliseconds of a run, bytes of a fill).
    pub fn new(total: u64, template: &str) -> Self {
        let live = std::io::stderr().is_terminal() && !crate::output::quiet();
        let target = if live {
            ProgressDrawTarget::stderr_with_hz(4)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        bar.set_style(
            ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        if live {
            bar.enable_steady_tick(Duration::from_millis(250));
        }
        Self { bar }
    }

    pub fn set(&self, position: u64, message: String) {
        self.bar.set_position(position);
        self.bar.set_message(message);
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
