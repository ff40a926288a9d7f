//! Reports as one HTML file each (`report.html`): the tables, and the plots inlined as SVG, so
//! the file opens from disk anywhere with nothing beside it (links into game viewer pages
//! excepted). The SVG is the same file [`super::plot::write`] wrote, read back, so the HTML and
//! the `.svg`/`.png` files never differ.

use super::plot::PlotError;
use std::fmt::Write as _;
use std::path::Path;

/// `s` with `&`, `<`, `>` and `"` escaped.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A table: `header` cells are text; `rows` cells are HTML (escape text with [`escape`]).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::from("<table>\n<thead><tr>");
    for h in header {
        let _ = write!(s, "<th>{}</th>", escape(h));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{c}</td>");
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody>\n</table>\n");
    s
}

/// The SVG file at `path` as an element to inline, in a `<figure>` with `caption`.
///
/// # Errors
/// The file cannot be read or holds no `<svg` element.
pub fn figure(path: &Path, caption: &str) -> Result<String, PlotError> {
    let err = |m: String| PlotError { path: path.display().to_string(), message: m };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    let start = text.find("<svg").ok_or_else(|| err("no <svg> element".into()))?;
    // Scales with the page; the viewBox keeps the proportions.
    let svg = text[start..].replacen("<svg width=\"900\" height=\"540\"", "<svg", 1);
    Ok(format!("<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n", escape(caption)))
}

const CSS: &str = "body{font-family:system-ui,-apple-system,\"Segoe UI\",\"DejaVu Sans\",sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em;color:#222;background:#fbfaf7}\
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}code{background:#eee;padding:0 .25em;border-radius:3px}\
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .55em;text-align:left;vertical-align:top}\
th{background:#eee9df}tbody tr:nth-child(even){background:#f3f0ea}figure{margin:1em 0;max-width:900px}figure svg{width:100%;height:auto;display:block}\
figcaption{font-size:.85em;color:#555}a{color:#1f5fa8}.games a{margin-right:.3em}";

/// A whole page around `body` (HTML).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{t}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<h1>{t}</h1>\n{body}</body>\n</html>\n",
        t = escape(title)
    )
}
