// node scripts/validate_gltf.js FILE: the Khronos glTF-Validator's report on FILE as JSON (exit 2: it could not run).
// The validator is installed by `make setup` (npm, into .venv/node_modules); NODE_PATH may point elsewhere.
const fs = require('fs');
const path_ = require('path');
let validator;
try {  // where `make setup` puts it, else wherever Node looks
  validator = require(path_.join(__dirname, '..', '.venv', 'node_modules', 'gltf-validator'));
} catch (error) {
  validator = require('gltf-validator');
}
const path = process.argv[2];
validator.validateBytes(new Uint8Array(fs.readFileSync(path)), {uri: path, maxIssues: 100})
  .then((report) => console.log(JSON.stringify(report)))
  .catch((error) => { console.error(String(error)); process.exit(2); });
