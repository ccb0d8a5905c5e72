"""The vault model: paths and the sandbox, notes and frontmatter, wikilinks, the file graph."""
