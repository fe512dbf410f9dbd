//! XML documents with line numbers for error messages.

/// A parsed XML document with the offsets where its lines start. Error messages name an
/// element's line, and roxmltree's `text_pos_at` rescans the text from its start, which made a
/// file of thousands of queues quadratic to parse; here a line is a binary search.
pub(crate) struct XmlSource<'i> {
    doc: roxmltree::Document<'i>,
    line_starts: Vec<usize>,
}

impl<'i> XmlSource<'i> {
    pub(crate) fn parse(xml: &'i str) -> std::result::Result<Self, roxmltree::Error> {
        let doc = roxmltree::Document::parse(xml)?;
        let line_starts = std::iter::once(0).chain(xml.match_indices('\n').map(|(i, _)| i + 1)).collect();
        Ok(XmlSource { doc, line_starts })
    }

    pub(crate) fn root_element(&self) -> roxmltree::Node<'_, 'i> {
        self.doc.root_element()
    }

    /// The 1-based line `node` starts on.
    pub(crate) fn line(&self, node: roxmltree::Node) -> u32 {
        self.line_starts.partition_point(|&start| start <= node.range().start) as u32
    }
}
