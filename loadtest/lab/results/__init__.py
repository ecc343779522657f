"""results.json and what is made of it: the document and its schema, the check, the verdict, the views and the
rendering."""
