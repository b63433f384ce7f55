//! Small SVG charts — bars and lines with linear or logarithmic axes — written as text, so a report is
//! one file that needs no script, no font and no network. Every chart carries a `<title>` and a
//! `<desc>` for screen readers, every mark a `<title>` with its exact value, and `data-marks` with the
//! number of marks drawn (the browser test counts them).

use std::fmt::Write as _;

use crate::fmt::{esc, si};

const W: f64 = 560.0;
const LEFT: f64 = 62.0;
const RIGHT: f64 = 18.0;
const FONT_PX: f64 = 13.0;
/// Okabe–Ito: told apart with every common colour-vision deficiency (yellow swapped for black).
const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#999999",
];
/// After the colours run out, lines differ by dash pattern too.
const DASHES: [&str; 3] = ["", "6 3", "2 3"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    Log,
}

pub struct Axis {
    pub label: String,
    pub scale: Scale,
    pub fmt: fn(f64) -> String,
    /// Fixed ticks (value, label) instead of computed ones, e.g. queue depths or percentiles.
    pub ticks: Option<Vec<(f64, String)>>,
}

impl Axis {
    pub fn new(label: impl Into<String>, scale: Scale, fmt: fn(f64) -> String) -> Self {
        Self {
            label: label.into(),
            scale,
            fmt,
            ticks: None,
        }
    }

    pub fn with_ticks(mut self, ticks: Vec<(f64, String)>) -> Self {
        self.ticks = Some(ticks);
        self
    }
}

pub fn count_axis(label: &str) -> Axis {
    Axis::new(label, Scale::Linear, si)
}

/// A data series: bars take `values` by category, lines take `points` (x, y). `warnings` (by
/// category or point; empty or missing: none) mark a value that comes with warnings: a hollow
/// triangle over it whose tooltip lists them.
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
    pub points: Vec<(f64, f64)>,
    pub warnings: Vec<String>,
}

impl Series {
    pub fn bars(name: impl Into<String>, values: Vec<Option<f64>>) -> Self {
        Self {
            name: name.into(),
            values,
            points: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            name: name.into(),
            values: Vec::new(),
            points,
            warnings: Vec::new(),
        }
    }

    /// The warnings of each value or point, in their order.
    pub fn with_warnings(mut self, warnings: Vec<String>) -> Self {
        self.warnings = warnings;
        self
    }

    fn warning(&self, i: usize) -> Option<&str> {
        self.warnings
            .get(i)
            .map(String::as_str)
            .filter(|w| !w.is_empty())
    }
}

/// The marker of a value with warnings: a hollow triangle with its tip at (x, y), whose tooltip
/// names the value and its warnings.
fn warning_marker(out: &mut String, x: f64, y: f64, color: &str, what: &str, warnings: &str) {
    let _ = write!(
        out,
        r##"<path class="warned" d="M{:.1} {:.1} L{:.1} {:.1} L{x:.1} {y:.1} Z" fill="#fff" stroke="{color}" stroke-width="2"><title>{} — warnings: {}</title></path>"##,
        x - 5.0,
        y - 9.0,
        x + 5.0,
        y - 9.0,
        esc(what),
        esc(warnings)
    );
}

/// The key of the warning marker, under the plot at `y`.
fn warning_key(out: &mut String, y: f64) {
    let _ = write!(
        out,
        r##"<g class="legend-item"><path d="M{:.1} {:.1} L{:.1} {:.1} L{:.1} {:.1} Z" fill="#fff" stroke="#000" stroke-width="2"/><text x="{:.1}" y="{:.1}">the cell has warnings: hover the triangle for them</text></g>"##,
        LEFT,
        y - 8.0,
        LEFT + 10.0,
        y - 8.0,
        LEFT + 5.0,
        y + 1.0,
        LEFT + 16.0,
        y
    );
}

/// A horizontal reference line, e.g. the geometric mean or the baseline's 1×.
pub struct Reference {
    pub value: f64,
    pub label: String,
}

/// A finished chart.
pub struct Svg {
    pub title: String,
    pub markup: String,
    pub marks: usize,
}

/// Maps data values to pixels along one axis.
struct Mapper {
    scale: Scale,
    lo: f64,
    hi: f64,
    px_lo: f64,
    px_hi: f64,
}

impl Mapper {
    fn t(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log => v.max(f64::MIN_POSITIVE).log10(),
        }
    }

    fn px(&self, v: f64) -> f64 {
        let (lo, hi) = (self.t(self.lo), self.t(self.hi));
        let f = if hi > lo {
            (self.t(v) - lo) / (hi - lo)
        } else {
            0.5
        };
        self.px_lo + f.clamp(-0.02, 1.02) * (self.px_hi - self.px_lo)
    }
}

/// Tick positions with their labels.
type Ticks = Vec<(f64, String)>;

/// More ticks than this on a linear axis means the range is degenerate for floats.
const MAX_TICKS: f64 = 50.0;
/// Decades labelled on a log axis before only every second, third … one is.
const MAX_DECADE_TICKS: f64 = 12.0;
/// The span of a log axis: beyond it a 1-2-5 bound is not finite.
const LOG_MIN: f64 = 1e-300;
const LOG_MAX: f64 = 1e300;

/// The domain and ticks of an axis over `values` (non-positive values are left out on a log axis).
fn domain(values: &[f64], axis: &Axis, zero_based: bool) -> Option<(f64, f64, Ticks)> {
    let usable: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && (axis.scale == Scale::Linear || *v > 0.0))
        .collect();
    if usable.is_empty() {
        return None;
    }
    let (mut lo, mut hi) = usable
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    if let Some(ticks) = &axis.ticks {
        for (t, _) in ticks {
            lo = lo.min(*t);
            hi = hi.max(*t);
        }
        return Some((lo, hi, ticks.clone()));
    }
    match axis.scale {
        Scale::Linear => {
            if zero_based {
                lo = lo.min(0.0);
                hi = hi.max(0.0);
            }
            if hi <= lo {
                hi = lo + if lo == 0.0 { 1.0 } else { lo.abs() };
            }
            let step = nice_step((hi - lo) / 5.0);
            let (nice_lo, nice_hi) = ((lo / step).floor() * step, (hi / step).ceil() * step);
            // Counted, not stepped until past the end: at 1e17 a step of 0.2 does not move a
            // float, and a range of ±1e300 has no finite step. Such an axis gets its two ends.
            let count = ((nice_hi - nice_lo) / step).round();
            if !(count.is_finite() && (1.0..=MAX_TICKS).contains(&count))
                || nice_lo + step == nice_lo
            {
                return Some((lo, hi, vec![(lo, (axis.fmt)(lo)), (hi, (axis.fmt)(hi))]));
            }
            let ticks = (0..=count as usize)
                .map(|i| {
                    let t = nice_lo + i as f64 * step;
                    let clean = if t.abs() < step * 1e-9 { 0.0 } else { t };
                    (clean, (axis.fmt)(clean))
                })
                .collect();
            Some((nice_lo, nice_hi, ticks))
        }
        Scale::Log => {
            // Bounds on the 1-2-5 series with a little room, so no bar or point sits on the axis.
            let steps = |e: i32| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e));
            // Within 1e±300 every bound is finite and the decades below are few: f64::MAX once
            // made the exponent overflow, and 5e-324 a loop over 2^31 decades.
            let lo_target = (lo / 1.15).clamp(LOG_MIN, LOG_MAX);
            let hi_target = (hi * 1.05).clamp(LOG_MIN, LOG_MAX);
            let mut e = lo_target.log10().floor() as i32;
            let lo_b = steps(e)
                .into_iter()
                .rev()
                .find(|v| *v <= lo_target)
                .unwrap_or(10f64.powi(e));
            e = hi_target.log10().floor() as i32;
            let mut hi_b = steps(e)
                .into_iter()
                .chain([10f64.powi(e + 1)])
                .find(|v| *v >= hi_target)
                .unwrap_or(10f64.powi(e + 1));
            if hi_b <= lo_b {
                hi_b = lo_b * 10.0;
            }
            let decades = (hi_b / lo_b).log10();
            // At most about a dozen labelled decades.
            let every = ((decades / MAX_DECADE_TICKS).ceil() as usize).max(1);
            let mut ticks = Vec::new();
            for e in ((lo_b.log10().floor() as i32)..=(hi_b.log10().ceil() as i32)).step_by(every) {
                let candidates: &[f64] = if decades <= 2.5 {
                    &[1.0, 2.0, 5.0]
                } else {
                    &[1.0]
                };
                for m in candidates {
                    let v = m * 10f64.powi(e);
                    if v >= lo_b * 0.999 && v <= hi_b * 1.001 {
                        ticks.push((v, (axis.fmt)(v)));
                    }
                }
            }
            Some((lo_b, hi_b, ticks))
        }
    }
}

fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// Rough text width, enough to lay out legends and labels without a font.
fn text_w(text: &str) -> f64 {
    text.chars().count() as f64 * FONT_PX * 0.58
}

fn trim_label(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max_chars - 1).collect();
        s.push('…');
        s
    }
}

struct Frame {
    /// Where the plot area may start, below the legend.
    top: f64,
    legend: String,
}

/// The opening of the SVG with its accessible name and the legend rows; returns where the plot starts.
fn frame(id: &str, title: &str, desc: &str, series: &[&str], out: &mut String) -> Frame {
    let mut legend = String::new();
    let mut x = LEFT;
    let mut y = 14.0;
    if series.len() > 1 {
        for (i, name) in series.iter().enumerate() {
            let name = trim_label(name, 40);
            let w = 26.0 + text_w(&name) + 14.0;
            if x + w > W - RIGHT && x > LEFT {
                x = LEFT;
                y += 18.0;
            }
            let (color, dash) = style(i);
            let _ = write!(
                legend,
                r#"<g class="legend-item"><line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{color}" stroke-width="4"{dash}/><text x="{:.1}" y="{:.1}">{}</text></g>"#,
                x + 20.0,
                x + 25.0,
                y + 4.0,
                esc(&name)
            );
            x += w;
        }
    }
    let top = if series.len() > 1 { y + 18.0 } else { 14.0 };
    let _ = write!(
        out,
        r#"<svg class="chart" id="{id}" viewBox="0 0 {W} {{HEIGHT}}" role="img" aria-labelledby="{id}-t {id}-d" xmlns="http://www.w3.org/2000/svg" data-marks="{{MARKS}}"><title id="{id}-t">{}</title><desc id="{id}-d">{}</desc>"#,
        esc(title),
        esc(desc)
    );
    Frame { top, legend }
}

fn style(i: usize) -> (&'static str, String) {
    let color = PALETTE[i % PALETTE.len()];
    let dash = DASHES[(i / PALETTE.len()) % DASHES.len()];
    let dash = if dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{dash}""#)
    };
    (color, dash)
}

fn y_axis(out: &mut String, y: &Mapper, ticks: &[(f64, String)], label: &str, plot_right: f64) {
    for (v, text) in ticks {
        let py = y.px(*v);
        let _ = write!(
            out,
            r#"<line class="grid" x1="{LEFT}" y1="{py:.1}" x2="{plot_right:.1}" y2="{py:.1}"/><text class="tick" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT - 6.0,
            py + 4.0,
            esc(text)
        );
    }
    let mid = (y.px_lo + y.px_hi) / 2.0;
    let _ = write!(
        out,
        r#"<text class="axis-label" transform="translate(14 {mid:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        esc(label)
    );
}

fn finish(mut out: String, title: &str, frame: Frame, height: f64, marks: usize) -> Svg {
    out.push_str(&frame.legend);
    out.push_str("</svg>");
    let markup = out
        .replacen("{HEIGHT}", &format!("{height:.0}"), 1)
        .replacen("{MARKS}", &marks.to_string(), 1);
    Svg {
        title: title.to_string(),
        markup,
        marks,
    }
}

fn reference_line(out: &mut String, y: &Mapper, r: &Reference, plot_right: f64) {
    let py = y.px(r.value);
    let _ = write!(
        out,
        r#"<line class="ref" x1="{LEFT}" y1="{py:.1}" x2="{plot_right:.1}" y2="{py:.1}"/><text class="ref-label" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
        plot_right - 2.0,
        py - 4.0,
        esc(&r.label)
    );
}

/// Grouped (or stacked) bars: one group per category, one bar per series. `None` draws no bar.
/// Returns `None` when there is nothing to draw.
#[allow(clippy::too_many_arguments)]
pub fn bars(
    id: &str,
    title: &str,
    desc: &str,
    categories: &[String],
    series: &[Series],
    y_axis_def: &Axis,
    stacked: bool,
    reference: Option<&Reference>,
) -> Option<Svg> {
    let n_cat = categories.len();
    if n_cat == 0 || series.is_empty() {
        return None;
    }
    let mut values: Vec<f64> = Vec::new();
    if stacked {
        for c in 0..n_cat {
            let sum: f64 = series
                .iter()
                .filter_map(|s| s.values.get(c).copied().flatten())
                .sum();
            if sum > 0.0 {
                values.push(sum);
            }
        }
    } else {
        values.extend(
            series
                .iter()
                .flat_map(|s| s.values.iter().flatten().copied()),
        );
    }
    if values.iter().all(|v| !v.is_finite() || *v <= 0.0) && y_axis_def.scale == Scale::Log {
        return None;
    }
    if values.is_empty() {
        return None;
    }
    if let Some(r) = reference {
        values.push(r.value);
    }
    let (lo, hi, ticks) = domain(&values, y_axis_def, true)?;
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let mut out = String::new();
    let frame = frame(id, title, desc, &names, &mut out);

    // Long or many category labels are turned, and the plot gets taller to hold them.
    let longest = categories
        .iter()
        .map(|c| trim_label(c, 22))
        .map(|c| text_w(&c))
        .fold(0.0, f64::max);
    let plot_w = W - LEFT - RIGHT;
    let slot = plot_w / n_cat as f64;
    let turned = longest > slot - 4.0;
    let label_h = if turned { longest * 0.64 + 14.0 } else { 18.0 };
    let plot_h = 230.0;
    let top = frame.top + 8.0;
    let bottom = top + plot_h;
    let height = bottom + label_h + 24.0;
    let y = Mapper {
        scale: y_axis_def.scale,
        lo,
        hi,
        px_lo: bottom,
        px_hi: top,
    };
    let plot_right = W - RIGHT;
    y_axis(&mut out, &y, &ticks, &y_axis_def.label, plot_right);
    let base_v = match y_axis_def.scale {
        Scale::Linear => 0.0f64.max(lo),
        Scale::Log => lo,
    };
    let base = y.px(base_v);
    let mut marks = 0;
    let mut warned = 0;
    let groups = if stacked { 1 } else { series.len() };
    let bar_w = (slot * 0.8 / groups as f64).min(48.0);
    for (c, cat) in categories.iter().enumerate() {
        let group_w = bar_w * groups as f64;
        let x0 = LEFT + slot * c as f64 + (slot - group_w) / 2.0;
        let mut stack_v = base_v;
        for (s, ser) in series.iter().enumerate() {
            let Some(v) = ser.values.get(c).copied().flatten() else {
                continue;
            };
            if !v.is_finite() || (y_axis_def.scale == Scale::Log && v <= 0.0) {
                continue;
            }
            let (color, _) = style(s);
            let (x, y_top, y_bot) = if stacked {
                let from = stack_v;
                stack_v += v;
                (x0, y.px(stack_v), y.px(from))
            } else {
                (x0 + bar_w * s as f64, y.px(v), base)
            };
            let h = (y_bot - y_top).max(1.0);
            let who = if series.len() > 1 {
                format!("{}, {}", cat, ser.name)
            } else {
                cat.clone()
            };
            let _ = write!(
                out,
                r#"<rect class="mark" x="{x:.1}" y="{:.1}" width="{:.1}" height="{h:.1}" fill="{color}"><title>{}: {}</title></rect>"#,
                y_bot - h,
                (bar_w - 1.0).max(1.0),
                esc(&who),
                esc(&(y_axis_def.fmt)(v))
            );
            marks += 1;
            if let Some(w) = ser.warning(c) {
                let what = format!("{who}: {}", (y_axis_def.fmt)(v));
                warning_marker(&mut out, x + bar_w / 2.0, y_top - 2.0, color, &what, w);
                warned += 1;
            }
        }
        let label = trim_label(cat, 22);
        let cx = LEFT + slot * (c as f64 + 0.5);
        if turned {
            let _ = write!(
                out,
                r#"<text class="tick" transform="translate({cx:.1} {:.1}) rotate(-40)" text-anchor="end"><title>{}</title>{}</text>"#,
                bottom + 14.0,
                esc(cat),
                esc(&label)
            );
        } else {
            let _ = write!(
                out,
                r#"<text class="tick" x="{cx:.1}" y="{:.1}" text-anchor="middle"><title>{}</title>{}</text>"#,
                bottom + 16.0,
                esc(cat),
                esc(&label)
            );
        }
    }
    let _ = write!(
        out,
        r#"<line class="axis" x1="{LEFT}" y1="{base:.1}" x2="{plot_right:.1}" y2="{base:.1}"/>"#
    );
    if let Some(r) = reference {
        reference_line(&mut out, &y, r, plot_right);
    }
    if marks == 0 {
        return None;
    }
    let height = if warned > 0 {
        warning_key(&mut out, height + 8.0);
        height + 26.0
    } else {
        height
    };
    Some(finish(out, title, frame, height, marks))
}

/// A point to draw: x, y and its index in the series' `points`.
type Point = (f64, f64, usize);

/// Lines through (x, y) points, one per series, with a dot at each point when there are few.
pub fn lines(
    id: &str,
    title: &str,
    desc: &str,
    series: &[Series],
    x_axis: &Axis,
    y_axis_def: &Axis,
    reference: Option<&Reference>,
) -> Option<Svg> {
    // Each drawable point with the index it had, to find its warnings.
    let usable = |s: &Series| -> Vec<Point> {
        s.points
            .iter()
            .enumerate()
            .map(|(k, (x, y))| (*x, *y, k))
            .filter(|(x, y, _)| {
                x.is_finite()
                    && y.is_finite()
                    && (x_axis.scale == Scale::Linear || *x > 0.0)
                    && (y_axis_def.scale == Scale::Linear || *y > 0.0)
            })
            .collect()
    };
    let cleaned: Vec<(usize, Vec<Point>)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| (i, usable(s)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if cleaned.is_empty() {
        return None;
    }
    let xs: Vec<f64> = cleaned
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.0))
        .collect();
    let mut ys: Vec<f64> = cleaned
        .iter()
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .collect();
    if let Some(r) = reference {
        ys.push(r.value);
    }
    let (xlo, xhi, xticks) = domain(&xs, x_axis, false)?;
    let (ylo, yhi, yticks) = domain(&ys, y_axis_def, true)?;
    let names: Vec<&str> = series.iter().map(|s| s.name.as_str()).collect();
    let mut out = String::new();
    let frame = frame(id, title, desc, &names, &mut out);
    let top = frame.top + 8.0;
    let bottom = top + 230.0;
    let mut height = bottom + 46.0;
    let plot_right = W - RIGHT;
    let x = Mapper {
        scale: x_axis.scale,
        lo: xlo,
        hi: xhi,
        px_lo: LEFT + 6.0,
        px_hi: plot_right - 6.0,
    };
    let y = Mapper {
        scale: y_axis_def.scale,
        lo: ylo,
        hi: yhi,
        px_lo: bottom,
        px_hi: top,
    };
    y_axis(&mut out, &y, &yticks, &y_axis_def.label, plot_right);
    // Thin out x ticks whose labels would overlap.
    let mut last_right = f64::NEG_INFINITY;
    for (v, text) in &xticks {
        let px = x.px(*v);
        let w = text_w(text);
        if px - w / 2.0 < last_right + 4.0 {
            continue;
        }
        last_right = px + w / 2.0;
        let _ = write!(
            out,
            r#"<line class="grid" x1="{px:.1}" y1="{top:.1}" x2="{px:.1}" y2="{bottom:.1}"/><text class="tick" x="{px:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            bottom + 16.0,
            esc(text)
        );
    }
    let _ = write!(
        out,
        r#"<line class="axis" x1="{LEFT}" y1="{bottom:.1}" x2="{plot_right:.1}" y2="{bottom:.1}"/><text class="axis-label" x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        (LEFT + plot_right) / 2.0,
        bottom + 36.0,
        esc(&x_axis.label)
    );
    if let Some(r) = reference {
        reference_line(&mut out, &y, r, plot_right);
    }
    let mut marks = 0;
    let mut warned = 0;
    for (i, points) in &cleaned {
        let (color, dash) = style(*i);
        let mut d = String::new();
        for (k, (px, py, _)) in points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1} {:.1}",
                if k == 0 { "M" } else { " L" },
                x.px(*px),
                y.px(*py)
            );
        }
        let name = &series[*i].name;
        let _ = write!(
            out,
            r#"<path class="mark line" d="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}><title>{}</title></path>"#,
            esc(name)
        );
        marks += 1;
        if points.len() <= 24 {
            for (px, py, _) in points {
                let _ = write!(
                    out,
                    r#"<circle class="dot" cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{}{}: {}</title></circle>"#,
                    x.px(*px),
                    y.px(*py),
                    if series.len() > 1 {
                        format!("{}, ", esc(name))
                    } else {
                        String::new()
                    },
                    esc(&(x_axis.fmt)(*px)),
                    esc(&(y_axis_def.fmt)(*py))
                );
            }
        }
        for (px, py, k) in points {
            if let Some(w) = series[*i].warning(*k) {
                let what = format!(
                    "{}{}: {}",
                    if series.len() > 1 {
                        format!("{name}, ")
                    } else {
                        String::new()
                    },
                    (x_axis.fmt)(*px),
                    (y_axis_def.fmt)(*py)
                );
                warning_marker(&mut out, x.px(*px), y.px(*py) - 4.0, color, &what, w);
                warned += 1;
            }
        }
    }
    if warned > 0 {
        warning_key(&mut out, height + 8.0);
        height += 26.0;
    }
    Some(finish(out, title, frame, height, marks))
}

/// Quantiles at which a percentile curve is sampled, up to 1 − 1/count (beyond that the histogram
/// has only the maximum). The x axis is in "nines": x = log10(1 / (1 − q)).
pub fn percentile_quantiles(count: u64) -> Vec<f64> {
    let max_nines = (count.max(2) as f64).log10().min(5.0);
    let steps = (max_nines / 0.05).ceil() as usize;
    (0..=steps)
        .map(|i| (i as f64 * 0.05).min(max_nines))
        .map(|x| 1.0 - 10f64.powf(-x))
        .collect()
}

pub fn nines(q: f64) -> f64 {
    (1.0 / (1.0 - q).max(1e-9)).log10()
}

/// Ticks 0 %, 90 %, 99 %, 99.9 % … on the nines axis.
pub fn percentile_axis(max_nines: f64) -> Axis {
    let labels = ["p0", "p90", "p99", "p99.9", "p99.99", "p99.999"];
    let ticks = (0..labels.len())
        .take_while(|i| *i as f64 <= max_nines.ceil().max(1.0))
        .map(|i| (i as f64, labels[i].to_string()))
        .collect();
    Axis::new("percentile", Scale::Linear, |x| {
        let q = 1.0 - 10f64.powf(-x);
        format!("p{}", crate::fmt::number(q * 100.0))
    })
    .with_ticks(ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values far from zero with small differences (a crafted result's times) and ranges with no
    /// finite step: the axis ends, with its two ends as ticks.
    #[test]
    fn degenerate_linear_ranges_end() {
        let axis = Axis::new("t", Scale::Linear, |v| format!("{v}"));
        for values in [
            vec![1e17, 1e17 + 7.0],
            vec![-1e300, 1e300],
            vec![f64::MAX, f64::MAX],
        ] {
            let (lo, hi, ticks) = domain(&values, &axis, false).unwrap();
            assert!(lo <= values[0] && hi >= values[1], "{values:?}");
            assert!(ticks.len() <= MAX_TICKS as usize + 1, "{values:?}");
        }
        let (_, _, ticks) = domain(&[0.0, 100.0], &axis, true).unwrap();
        assert_eq!(
            ticks.len(),
            6,
            "an ordinary axis keeps its nice ticks: {ticks:?}"
        );
    }

    /// The extremes of f64 on a log axis: f64::MAX overflowed the exponent (a panic), 5e-324
    /// started a loop over 2^31 decades (a hang that filled memory with ticks).
    #[test]
    fn log_axis_of_extreme_values_ends_with_few_ticks() {
        let axis = Axis::new("y", Scale::Log, si);
        for values in [
            vec![f64::MAX],
            vec![5e-324, 1.0],
            vec![5e-324, f64::MAX],
            vec![f64::MIN_POSITIVE, 1e-300],
        ] {
            let (lo, hi, ticks) = domain(&values, &axis, true).unwrap();
            assert!(
                lo.is_finite() && hi.is_finite() && lo > 0.0 && hi > lo,
                "{values:?}"
            );
            assert!(
                !ticks.is_empty() && ticks.len() <= 40,
                "{values:?}: {}",
                ticks.len()
            );
        }
    }

    fn count(markup: &str, needle: &str) -> usize {
        markup.matches(needle).count()
    }

    #[test]
    fn bars_draw_one_rect_per_present_value_and_escape_labels() {
        let svg = bars(
            "c1",
            "IOPS <per> point",
            "desc",
            &["a&b".into(), "c".into()],
            &[
                Series::bars("read", vec![Some(10.0), None]),
                Series::bars("write", vec![Some(5.0), Some(2.0)]),
            ],
            &count_axis("IOPS"),
            false,
            None,
        )
        .unwrap();
        assert_eq!(svg.marks, 3);
        assert_eq!(count(&svg.markup, r#"<rect class="mark""#), 3);
        assert!(svg.markup.contains("IOPS &lt;per&gt; point"));
        assert!(svg.markup.contains("a&amp;b"));
        assert!(svg.markup.contains(r#"data-marks="3""#));
        assert!(!svg.markup.contains("{HEIGHT}"));
    }

    #[test]
    fn nothing_to_draw_gives_no_chart() {
        let empty = bars(
            "c",
            "t",
            "d",
            &["a".into()],
            &[Series::bars("s", vec![None])],
            &count_axis("x"),
            false,
            None,
        );
        assert!(empty.is_none());
        let log_of_zero = lines(
            "c",
            "t",
            "d",
            &[Series::line("s", vec![(1.0, 0.0)])],
            &count_axis("x"),
            &Axis::new("y", Scale::Log, si),
            None,
        );
        assert!(log_of_zero.is_none());
    }

    #[test]
    fn log_axis_spans_whole_decades() {
        let axis = Axis::new("y", Scale::Log, si);
        let (lo, hi, ticks) = domain(&[150.0, 43_000.0], &axis, true).unwrap();
        assert_eq!((lo, hi), (100.0, 50_000.0));
        assert_eq!(ticks.first().unwrap().1, "100");
        assert_eq!(ticks.last().unwrap().1, "10k");
        // A value on a round number still gets room below it.
        let (lo, _, _) = domain(&[1.0, 208.0], &axis, true).unwrap();
        assert_eq!(lo, 0.5);
        let lin = count_axis("y");
        let (lo, hi, _) = domain(&[3.0, 97.0], &lin, true).unwrap();
        assert_eq!((lo, hi), (0.0, 100.0));
    }

    #[test]
    fn percentile_sampling_stops_where_the_data_does() {
        let q = percentile_quantiles(1000);
        assert_eq!(q[0], 0.0);
        assert!((nines(*q.last().unwrap()) - 3.0).abs() < 1e-9);
        assert!(q.windows(2).all(|w| w[1] > w[0]));
    }
}
