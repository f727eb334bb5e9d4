// Express re-exports body parsers and static file serving at load time; opkit's metrics, probe and
// solver servers use neither, so the bundle leaves them out (they cost ~15 MiB of memory at load).
// Calling one of them fails loudly instead of silently doing nothing.
const unavailable = (name) => () => {
  throw new Error(`express.${name} is not included in this bundle (tools/build/shims)`);
};
module.exports = Object.assign(unavailable('static'), { json: unavailable('json'), raw: unavailable('raw'), text: unavailable('text'), urlencoded: unavailable('urlencoded') });
