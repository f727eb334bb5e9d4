// axios bundles form-data (multipart bodies), which looks up content types in mime-db, a 134 KB
// table. acme-client sends JSON only, so no multipart body is ever built: an empty table (every
// lookup "unknown", as for an unlisted extension) costs nothing.
module.exports = {};
