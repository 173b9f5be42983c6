//! A scope's label table: each label's first definition, its redefinitions and every goto
//! that names it, found by name.

use std::collections::HashMap;

use rustpython_compiler::ast::name::Name;

use super::{Marker, MarkerId, MarkerKind};

/// Every label of one scope, with its definition and every goto that names it.
#[derive(Debug, Default)]
pub struct LabelTable {
    entries: Vec<LabelEntry>,
    by_name: HashMap<Name, usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LabelEntry {
    pub name: Name,
    /// The first `label .name` of the scope.
    pub definition: MarkerId,
    /// Later `label .name` statements of the same name: each one is an error.
    pub redefinitions: Vec<MarkerId>,
    /// Every `goto .name` of the scope, in source order.
    pub gotos: Vec<MarkerId>,
}

impl LabelTable {
    pub(super) fn build(markers: &[Marker]) -> Self {
        let mut table = LabelTable::default();
        for (index, marker) in markers.iter().enumerate() {
            if let MarkerKind::Label { name, .. } = &marker.kind {
                match table.by_name.get(name) {
                    Some(&entry) => table.entries[entry].redefinitions.push(MarkerId(index)),
                    None => {
                        table.by_name.insert(name.clone(), table.entries.len());
                        table.entries.push(LabelEntry {
                            name: name.clone(),
                            definition: MarkerId(index),
                            redefinitions: Vec::new(),
                            gotos: Vec::new(),
                        });
                    }
                }
            }
        }
        for (index, marker) in markers.iter().enumerate() {
            if let MarkerKind::Goto { name, .. } = &marker.kind
                && let Some(&entry) = table.by_name.get(name)
            {
                table.entries[entry].gotos.push(MarkerId(index));
            }
        }
        table
    }

    pub fn get(&self, name: &str) -> Option<&LabelEntry> {
        self.by_name.get(name).map(|&entry| &self.entries[entry])
    }

    /// Labels in the order of their first definition.
    pub fn iter(&self) -> impl Iterator<Item = &LabelEntry> {
        self.entries.iter()
    }
}
