// An independent check of a cosigned checkpoint, written from the C2SP texts alone
// (c2sp.org/signed-note, c2sp.org/tlog-cosignature), in another language and another
// crypto library (Node's OpenSSL binding), sharing no code with pitboss.
// usage: node cosig_check.mjs NOTE_FILE LOG_VKEY WITNESS_VKEY
// prints "ok <origin> <size> cosigned-at <unix time>" and exits 0, or names the failure and exits 1.
import { readFileSync } from "node:fs";
import { createHash, createPublicKey, verify } from "node:crypto";

const [noteFile, logVkey, witnessVkey] = process.argv.slice(2);
const note = readFileSync(noteFile, "utf8");
const fail = (why) => { console.log(`FAIL ${why}`); process.exit(1); };

function parseVkey(text, type) {
  const parts = text.trim().split("+");  // name+hash+base64, and base64 may hold '+' itself
  const [name, hash, b64] = [parts[0], parts[1], parts.slice(2).join("+")];
  const raw = Buffer.from(b64, "base64");
  if (raw.length !== 33 || raw[0] !== type) fail(`vkey ${name} is not of type ${type}`);
  const pub = raw.subarray(1);
  const id = createHash("sha256").update(Buffer.concat([Buffer.from(name + "\n"), Buffer.from([type]), pub]))
    .digest().subarray(0, 4);
  if (id.toString("hex") !== hash) fail(`vkey ${name}: key hash mismatch`);
  const spki = Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), pub]);
  return { name, id, key: createPublicKey({ key: spki, format: "der", type: "spki" }) };
}

const sep = note.lastIndexOf("\n\n");
if (sep < 0 || !note.endsWith("\n")) fail("not a signed note");
const text = note.slice(0, sep + 1);
const sigLines = note.slice(sep + 2).split("\n").filter((l) => l.length);
const log = parseVkey(logVkey, 0x01);
const witness = parseVkey(witnessVkey, 0x04);
let logOk = false, cosignedAt = null;
for (const line of sigLines) {
  const m = line.match(/^\u2014 (\S+) (\S+)$/);
  if (!m) fail(`bad signature line ${line}`);
  const blob = Buffer.from(m[2], "base64");
  if (m[1] === log.name && blob.subarray(0, 4).equals(log.id)) {
    logOk = verify(null, Buffer.from(text, "utf8"), log.key, blob.subarray(4));
  } else if (m[1] === witness.name && blob.subarray(0, 4).equals(witness.id)) {
    const time = blob.readBigUInt64BE(4);
    const msg = Buffer.from(`cosignature/v1\ntime ${time}\n` + text, "utf8");
    if (!verify(null, msg, witness.key, blob.subarray(12))) fail("cosignature does not verify");
    cosignedAt = time;
  }
}
if (!logOk) fail("log signature missing or invalid");
if (cosignedAt === null) fail("no cosignature by the witness");
const [origin, size] = text.split("\n");
console.log(`ok ${origin} ${size} cosigned-at ${cosignedAt}`);
