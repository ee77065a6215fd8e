"""The pages for people: server-rendered HTML, one module per page or set of forms."""
