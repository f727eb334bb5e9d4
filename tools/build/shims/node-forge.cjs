// acme-client's index loads its legacy `acme.forge` API, which opkit never calls (it signs with
// node:crypto and @peculiar/x509): the only use at load is promisify(forge.pki.rsa.generateKeyPair).
// node-forge is 300 KB of bundle and ~8 MiB of memory once loaded.
const unused = () => {
  throw new Error("node-forge is not included in this bundle (tools/build/shims): acme-client's forge API is not used by opkit");
};
module.exports = { pki: { rsa: { generateKeyPair: unused } }, pem: { decode: unused } };
