// pitboss evidence report: re-checks the bundle embedded in this page, in the browser,
// offline (docs/spec.md): every event's canonical form and hash (RFC 8785 + SHA-256),
// chains, the key ring from its first key, every Ed25519 signature (WebCrypto, plus the
// acceptance rules WebCrypto does not apply: S < L, no small-order R or A), every
// inclusion proof (RFC 9162), the checkpoint's signature by the log key, and witness
// cosignatures for the witness keys printed on the page. No network: nothing is fetched.
"use strict";

const enc = new TextEncoder();
const L = 2n ** 252n + 27742317777372353535851937790883648493n;
// libsodium's small-order encodings (ge25519_has_small_order), compared without the sign bit
const SMALL_ORDER = [
  "0000000000000000000000000000000000000000000000000000000000000000",
  "0100000000000000000000000000000000000000000000000000000000000000",
  "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
  "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
];

function hex(bytes) { return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(""); }
function unhex(text) {
  if (!/^([0-9a-f]{2})*$/.test(text)) throw new Error("not lowercase hex: " + text.slice(0, 20));
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(2 * i, 2), 16);
  return out;
}
function unb64(text) {
  const bin = atob(text);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}
function b64(bytes) { return btoa(String.fromCharCode(...bytes)); }
function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}
function equal(a, b) { return a.length === b.length && a.every((x, i) => x === b[i]); }
async function sha256(bytes) { return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)); }

// RFC 8785 for the ledger's JSON subset (integers within 2^53, no floats): keys sorted by
// UTF-16 code units (JavaScript's own string order), strings as JSON.stringify writes them.
function jcs(value) {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isSafeInteger(value)) throw new Error("a number that is not a safe integer");
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return "[" + value.map(jcs).join(",") + "]";
  return "{" + Object.keys(value).sort().map((k) => JSON.stringify(k) + ":" + jcs(value[k])).join(",") + "}";
}

function instant(at) { // one spelling per instant, for comparisons: 6 fraction digits
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/.exec(at);
  if (!m) throw new Error("not a UTC time: " + at);
  return m[1] + "." + (m[2] || "").padEnd(6, "0") + "Z";
}

function smallOrder(point) {
  const p = Uint8Array.from(point);
  p[31] &= 0x7f;
  return SMALL_ORDER.includes(hex(p));
}

async function ed25519(publicKey, signature, message) {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  let s = 0n;
  for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(signature[32 + i]);
  if (s >= L) return false; // RFC 8032 5.1.7: S must be canonical
  if (smallOrder(signature.slice(0, 32)) || smallOrder(publicKey)) return false; // libsodium's rule (docs/spec.md)
  try {
    const key = await crypto.subtle.importKey("raw", publicKey, { name: "Ed25519" }, false, ["verify"]);
    return await crypto.subtle.verify({ name: "Ed25519" }, key, signature, message);
  } catch (e) {
    return false;
  }
}

async function nodeHash(left, right) { return sha256(concat(Uint8Array.of(1), left, right)); }

async function inclusionRoot(leafHash, index, size, path) { // RFC 9162 2.1.3.2
  if (index >= size) throw new Error("index " + index + " is outside a tree of " + size);
  let fn = index, sn = size - 1, r = leafHash;
  for (const p of path) {
    if (sn === 0) throw new Error("the proof has hashes left over");
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
  }
  if (sn !== 0) throw new Error("the proof is too short");
  return r;
}

function parseVkey(text, type) {
  const t = text.trim(), a = t.indexOf("+"), b = t.indexOf("+", a + 1);  // the key's base64 may hold '+'
  if (a < 0 || b < 0) throw new Error("a verifier key is name+keyhash+key");
  const parts = [t.slice(0, a), t.slice(a + 1, b), t.slice(b + 1)];
  const raw = unb64(parts[2]);
  if (raw.length !== 33 || raw[0] !== type) throw new Error("verifier key " + parts[0] + " is not of type " + type);
  return { name: parts[0], keyHash: parts[1], raw: raw, publicKey: raw.slice(1) };
}

function splitNote(note) {
  const sep = note.lastIndexOf("\n\n");
  if (sep < 0 || !note.endsWith("\n")) throw new Error("the note has no blank line before its signatures");
  const lines = note.slice(sep + 2).split("\n").filter((l) => l.length);
  return {
    text: note.slice(0, sep + 1),
    sigs: lines.map((l) => {
      const m = /^\u2014 (\S+) (\S+)$/.exec(l);
      if (!m) throw new Error("malformed signature line");
      return { name: m[1], blob: unb64(m[2]) };
    }),
  };
}

async function keyHashOf(name, raw) { return hex((await sha256(concat(enc.encode(name + "\n"), raw))).slice(0, 4)); }

async function openCheckpoint(note, vkey) {
  const { text, sigs } = splitNote(note);
  if (await keyHashOf(vkey.name, vkey.raw) !== vkey.keyHash) throw new Error("the log key's key hash is wrong");
  const mine = sigs.filter((s) => s.name === vkey.name && hex(s.blob.slice(0, 4)) === vkey.keyHash);
  if (!mine.length) throw new Error("the checkpoint is not signed by " + vkey.name);
  for (const s of mine) {
    if (s.blob.length !== 68 || !(await ed25519(vkey.publicKey, s.blob.slice(4), enc.encode(text)))) {
      throw new Error("the checkpoint's signature by " + vkey.name + " does not verify");
    }
  }
  const lines = text.split("\n");
  if (lines[0] !== vkey.name) throw new Error("the checkpoint's origin is not the log key's name");
  if (!/^(0|[1-9][0-9]*)$/.test(lines[1])) throw new Error("the checkpoint's size is not a number");
  const root = unb64(lines[2]);
  if (root.length !== 32) throw new Error("the checkpoint's root is not 32 bytes");
  const ring = lines.slice(3).map((l) => /^pitboss\/keyring (\d+) ([0-9a-f]{64})$/.exec(l)).find(Boolean);
  return { text, sigs, size: Number(lines[1]), root, keyring: ring ? { seq: Number(ring[1]), hash: ring[2] } : null };
}

async function cosigned(cp, witness) {
  const w = parseVkey(witness, 4);
  if (await keyHashOf(w.name, w.raw) !== w.keyHash) return false;
  for (const s of cp.sigs) {
    if (s.name !== w.name || hex(s.blob.slice(0, 4)) !== w.keyHash || s.blob.length !== 76) continue;
    let t = 0n;
    for (const b of s.blob.slice(4, 12)) t = (t << 8n) | BigInt(b);
    const msg = enc.encode("cosignature/v1\ntime " + t.toString() + "\n" + cp.text);
    if (await ed25519(w.publicKey, s.blob.slice(12), msg)) return true;
  }
  return false;
}

async function verifyBundle(data) {
  const problems = [];
  const checks = [];
  const events = [];
  for (let i = 0; i < data.events.length; i++) {
    const line = data.events[i];
    const where = "event " + (i + 1);
    try {
      const ev = JSON.parse(line);
      if (jcs(ev) !== line) throw new Error("it is not stored in its canonical form (RFC 8785)");
      const body = {};
      for (const k of ["ledger", "stream", "seq", "at", "kind", "actor", "key_id", "prev", "payload"]) {
        if (!(k in ev)) throw new Error("no " + k);
        body[k] = ev[k];
      }
      const h = await sha256(concat(enc.encode("pitboss.event.v2\u0000"), enc.encode(jcs(body))));
      if (hex(h) !== ev.hash) throw new Error("its content does not match its hash: altered after signing");
      events.push({ n: i + 1, ev, hash: h });
    } catch (e) {
      problems.push(where + ": " + e.message);
    }
  }
  checks.push("every event's canonical form and SHA-256 hash");
  // chains: the key ring and the round from seq 1, every stream link by link
  const heads = {};
  for (const { n, ev } of events) {
    const head = heads[ev.stream];
    if (head) {
      if (ev.seq !== head.seq + 1 || ev.prev !== head.hash) problems.push("event " + n + ": does not follow " + ev.stream + " seq " + head.seq);
    } else if ((ev.stream === "keyring" || ev.stream === data.round) && (ev.seq !== 1 || ev.prev !== "0".repeat(64))) {
      problems.push("event " + n + ": " + ev.stream + " must start at seq 1");
    }
    heads[ev.stream] = { seq: ev.seq, hash: ev.hash };
  }
  checks.push("every stream's chain");
  // the key ring, from its first key (the house key printed on the page)
  const keys = {};
  let origin = null, anchor = null;
  const ring = events.filter((e) => e.ev.stream === "keyring");
  for (const { n, ev, hash } of ring) {
    const p = ev.payload;
    try {
      if (ev.seq === 1) {
        if (ev.kind !== "key.register.v2" || p.role !== "house" || p.key_id !== ev.key_id || p.actor !== ev.actor) {
          throw new Error("the key ring must start with the house key registering itself");
        }
        origin = ev.ledger;
        anchor = p.public_key;
      } else {
        const signer = keys[ev.key_id];
        if (!signer || signer.role !== "house") throw new Error("not signed by a house key of the key ring");
        authorise(signer, ev);
      }
      if (ev.ledger !== origin) throw new Error("signed for another ledger");
      const signerKey = ev.seq === 1 ? unhex(p.public_key) : keys[ev.key_id].publicKey;
      if (!(await ed25519(signerKey, unhex(ev.sig), hash))) throw new Error("its signature does not verify");
      if (ev.kind === "key.register.v2") {
        const pub = unhex(p.public_key);
        if (hex((await sha256(pub)).slice(0, 8)) !== p.key_id) throw new Error("key_id is not its key's id");
        if (smallOrder(pub)) throw new Error("a key of small order");
        keys[p.key_id] = { actor: p.actor, role: p.role, publicKey: pub, kinds: new Set(p.kinds),
                           validFrom: instant(p.valid_from), until: null, revoked: null };
      } else if (ev.kind === "key.rotate.v1") {
        const old = keys[p.key_id];
        if (!old) throw new Error("rotates an unknown key");
        const pub = unhex(p.new_public_key);
        if (hex((await sha256(pub)).slice(0, 8)) !== p.new_key_id) throw new Error("new_key_id is not its key's id");
        old.until = instant(p.effective);
        keys[p.new_key_id] = { actor: old.actor, role: old.role, publicKey: pub, kinds: old.kinds,
                               validFrom: instant(p.effective), until: null, revoked: null };
      } else if (ev.kind === "key.revoke.v1") {
        const k = keys[p.key_id];
        if (!k) throw new Error("revokes an unknown key");
        const from = instant(p.revoked_from);
        if (k.revoked === null || from < k.revoked) k.revoked = from;
      }
    } catch (e) {
      problems.push("event " + n + " (keyring seq " + ev.seq + "): " + e.message);
    }
  }
  checks.push("the key ring from its first key, each change signed by a house key");
  function authorise(key, ev) {
    if (key.actor !== ev.actor) throw new Error("the key belongs to " + key.actor + ", not " + ev.actor);
    const at = instant(ev.at);
    if (key.role !== "importer" && at < key.validFrom) throw new Error("the key is not yet valid at " + ev.at);
    if (key.until !== null && at >= key.until) throw new Error("the key was rotated out before " + ev.at);
    if (key.revoked !== null && at >= key.revoked) throw new Error("the key is revoked from before " + ev.at);
    if (!key.kinds.has(ev.kind)) throw new Error("the key may not sign " + ev.kind);
  }
  // every other event: signed by its key, as the whole key ring has it (a later revocation applies)
  for (const { n, ev, hash } of events) {
    if (ev.stream === "keyring") continue;
    try {
      const key = keys[ev.key_id];
      if (!key) throw new Error("unknown key " + ev.key_id);
      if (ev.ledger !== origin) throw new Error("signed for another ledger");
      authorise(key, ev);
      if (!(await ed25519(key.publicKey, unhex(ev.sig), hash))) throw new Error("its signature does not verify");
    } catch (e) {
      problems.push("event " + n + " (" + ev.stream + " seq " + ev.seq + "): " + e.message);
    }
  }
  checks.push("every Ed25519 signature, by the key the key ring gives, valid at the event's time");
  // the checkpoint and every inclusion proof
  let cp = null;
  try {
    const vkey = parseVkey(data.vkey, 1);
    cp = await openCheckpoint(data.note, vkey);
    if (!Object.values(keys).some((k) => k.role === "ledger" && k.actor === vkey.name && equal(k.publicKey, vkey.publicKey))) {
      throw new Error("the log key is not a ledger key of the key ring");
    }
    const last = ring.length ? ring[ring.length - 1].ev : null;
    if (!cp.keyring || !last || cp.keyring.seq !== last.seq || cp.keyring.hash !== last.hash) {
      throw new Error("the key ring here does not reach the head the checkpoint states (a key-ring event is missing)");
    }
    checks.push("the checkpoint (" + cp.size + " events) signed by the log key " + vkey.name);
  } catch (e) {
    problems.push("checkpoint: " + e.message);
  }
  if (cp !== null) {
    for (const { n, ev, hash } of events) {
      try {
        const proof = data.proofs[n - 1] || "";
        const sep = proof.indexOf("\n\n");
        const head = proof.slice(0, sep).split("\n");
        if (sep < 0 || head[0] !== "c2sp.org/tlog-proof@v1") throw new Error("not a tlog-proof");
        if (splitNote(proof.slice(sep + 2)).text !== cp.text) throw new Error("the proof is against another checkpoint");
        const extra = head[1].startsWith("extra ") ? JSON.parse(new TextDecoder().decode(unb64(head[1].slice(6)))) : null;
        if (!extra || extra.hash !== ev.hash) throw new Error("the proof is for another event");
        const m = /^index (0|[1-9][0-9]*)$/.exec(head[2] || "");
        if (!m) throw new Error("the proof has no index");
        const path = head.slice(3).map(unb64);
        const leaf = await sha256(concat(Uint8Array.of(0), hash));
        const root = await inclusionRoot(leaf, Number(m[1]), cp.size, path);
        if (!equal(root, cp.root)) throw new Error("the proof does not lead to the checkpoint's root");
      } catch (e) {
        problems.push("event " + n + ": inclusion proof: " + e.message);
      }
    }
    checks.push("every event's inclusion proof against the checkpoint's root");
  }
  // witnesses
  let witnessed = null;
  if (cp !== null && data.witnesses.length) {
    let count = 0;
    for (const w of data.witnesses) { try { if (await cosigned(cp, w)) count++; } catch (e) { /* a malformed key counts for nothing */ } }
    witnessed = count;
    if (count < data.quorum) problems.push("witnesses: " + count + " of the " + data.quorum + " cosignatures required");
    else checks.push("cosigned by " + count + " of the witnesses printed below");
  }
  return { ok: problems.length === 0, problems, checks, anchor, events: events.length, witnessed };
}

function text(tag, content, cls) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (cls) el.className = cls;
  return el;
}

async function main() {
  const status = document.getElementById("status");
  let result;
  try {
    const data = JSON.parse(document.getElementById("bundle").textContent);
    if (!(crypto && crypto.subtle)) throw new Error("this browser offers no WebCrypto here");
    result = await verifyBundle(data);
  } catch (e) {
    result = { ok: false, problems: ["the page could not check its data: " + e.message], checks: [], anchor: null };
  }
  status.replaceChildren();
  status.className = result.ok ? "status pass" : "status fail";
  status.append(text("strong", result.ok
    ? "CHECKS PASS in this browser: " + result.events + " signed events, their hashes, signatures, chains and inclusion proofs, and the signed checkpoint."
    : "FAILED: this bundle does not check out. Do not rely on it."));
  if (result.ok) {
    status.append(text("p", "They pass against the house key below. Compare it with the key the operator publishes (or your regulator holds): a bundle's own copy proves nothing by itself."));
  }
  const list = document.createElement("ul");
  for (const p of result.problems) list.append(text("li", p, "problem"));
  for (const c of result.checks) list.append(text("li", "checked: " + c));
  status.append(list);
  if (result.anchor) document.getElementById("anchor").textContent = result.anchor;
  document.body.dataset.verdict = result.ok ? "PASS" : "FAILED";
  document.body.dataset.problems = String(result.problems.length);
}

main();
