//! `--variant` specs: [`Variant::from_spec`] reads a preset name, a variant TOML file or an
//! OpenTafl rules string. Kept apart from `variant` because a rules string is read by
//! `notation`, which sits above `variant`.

use crate::error::ParseError;
use crate::notation::parse_rules_string;
use crate::variant::{load_error, preset_names, Variant, PRESETS};
use std::path::Path;

impl Variant {
    /// Loads a variant from a spec: a preset name, a path to a TOML file, or an OpenTafl rules
    /// string (anything containing `dim:`).
    ///
    /// # Errors
    /// An unknown name, an unreadable or invalid file ([`ParseKind::Variant`](crate::ParseKind::Variant)), or an invalid
    /// rules string ([`ParseKind::RulesString`](crate::ParseKind::RulesString)), each as one line naming the source.
    pub fn from_spec(spec: &str) -> Result<Variant, ParseError> {
        let spec = spec.trim();
        if let Some((_, text)) = PRESETS.iter().find(|(n, _)| *n == spec) {
            return Variant::from_toml_str(text, spec);
        }
        if spec.contains("dim:") {
            return parse_rules_string(spec).map_err(|e| ParseError { message: format!("OpenTafl rules string: {}", e.message), ..e });
        }
        let path = Path::new(spec);
        if spec.ends_with(".toml") || path.exists() {
            return Variant::from_file(path);
        }
        Err(load_error(spec, format!("unknown variant (presets: {}; or give a .toml path or an OpenTafl rules string)", preset_names())))
    }
}
