// opkit uses client-node only for KubeConfig (credentials); its fetch-based REST layer is never
// called. Node >= 18 has fetch and Headers built in, so the bundle uses those instead of node-fetch,
// whose URL/punycode tables (whatwg-url, tr46) cost ~10 MiB of memory at load.
module.exports = globalThis.fetch;
module.exports.default = globalThis.fetch;
module.exports.Headers = globalThis.Headers;
module.exports.Request = globalThis.Request;
module.exports.Response = globalThis.Response;
module.exports.FetchError = Error;
