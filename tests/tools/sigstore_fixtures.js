// sigstore_fixtures.js: makes cosign signatures and sigstore bundles with the
// real sigstore-js packages (@sigstore/sign against the @sigstore/mock Fulcio
// and Rekor), exports the keys and roots to files, and records for every case
// what @sigstore/verify (the peer) says, so airlock's tests can check that
// they agree.
//
// usage: node sigstore_fixtures.js OUTDIR DIGEST REFERENCE
// Writes OUTDIR/cases.json: [{name, bundle?, artifact?, sig?, keys, fulcio,
// rekor, issuer?, subject?, require_tlog, peer: "ok" | "fail: reason"}].
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const nock = require('nock');
const mock = require('@sigstore/mock');
const sign = require('@sigstore/sign');
const { bundleToJSON, bundleFromJSON } = require('@sigstore/bundle');
const { X509Certificate } = require('@sigstore/core');
const { Verifier, toSignedEntity } = require('@sigstore/verify');

const FULCIO_URL = 'https://fulcio.airlock.test';
const REKOR_URL = 'https://rekor.airlock.test';
const TSA_URL = 'https://tsa.airlock.test';
const ISSUER = 'https://oidc.airlock.test';
const SUBJECT = 'https://github.com/example/release/.github/workflows/sign.yml@refs/heads/main';
const OTHER_SUBJECT = 'https://github.com/mallory/evil/.github/workflows/sign.yml@refs/heads/main';
const OTHER_ISSUER = 'https://oidc.mallory.test';

const [outdir, digest, reference] = process.argv.slice(2);
if (!outdir || !digest || !reference) {
	console.error('usage: node sigstore_fixtures.js OUTDIR DIGEST REFERENCE');
	process.exit(2);
}
fs.mkdirSync(outdir, { recursive: true });

function write(name, data) {
	fs.writeFileSync(path.join(outdir, name), data);
	return name;
}
function pubPem(k) {
	return k.export({ type: 'spki', format: 'pem' });
}
function derToPem(der, label) {
	const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n');
	return `-----BEGIN ${label}-----\n${b64.replace(/\n$/, '')}\n-----END ${label}-----\n`;
}
function b64url(s) {
	return Buffer.from(s).toString('base64url');
}
function jwt(claims) {
	return [b64url('{"alg":"ES256","typ":"JWT"}'), b64url(JSON.stringify(claims)), b64url('sig')].join('.');
}
const forever = { start: new Date(0), end: new Date(8.64e15) };

function cosignPayload(d, ref) {
	// the byte layout cosign writes (pkg/payload): critical sorted, optional null
	return Buffer.from(JSON.stringify({
		critical: {
			identity: { 'docker-reference': ref },
			image: { 'docker-manifest-digest': d },
			type: 'cosign container image signature',
		},
		optional: null,
	}));
}

// A signer holding a local key (cosign sign --key), as the sign package's
// Signer interface wants it.
function keySigner(kp, hint) {
	return {
		sign: async (data) => ({
			signature: crypto.sign(kp.algo, data, kp.privateKey),
			key: { $case: 'publicKey', publicKey: pubPem(kp.publicKey), hint },
		}),
	};
}

async function main() {
	const rekorKP = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
	const fulcioKP = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
	const ctKP = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

	const ctlog = await mock.initializeCTLog(ctKP);
	const ca = await mock.initializeCA(fulcioKP, ctlog);
	const tlog = await mock.initializeTLog(REKOR_URL, rekorKP);
	// An old CA clock: certificates that expired long before the log saw them.
	const oldCA = await mock.initializeCA(fulcioKP, ctlog, new Date(Date.now() - 86400 * 1000));
	const tsaKP = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
	const tsa = await mock.initializeTSA(tsaKP);
	// The mock encodes genTime with DER's trailing zeros of the fraction
	// removed (".05"), and @sigstore/core's parser accepts only three
	// digits: one run in ten failed the peer with "invalid time". Keep the
	// clock real but never on a multiple of 10 ms, so both agree.
	// tsaMs forces the fraction for the one case that tests it.
	let tsaMs = null;
	tsa.getCurrentTime = () => {
		const d = new Date();
		if (tsaMs !== null) d.setMilliseconds(tsaMs);
		else if (d.getMilliseconds() % 10 === 0) d.setMilliseconds(d.getMilliseconds() + 1);
		return d;
	};
	const tsaHandler = mock.tsaHandler(tsa);
	const caHandler = mock.fulcioHandler(ca);
	const oldCAHandler = mock.fulcioHandler(oldCA);
	const rekorHandler = mock.rekorHandler(tlog);

	function intercept(h) {
		nock(FULCIO_URL).post(h.path).reply(async (_, body) => {
			const r = await h.fn(typeof body === 'string' ? body : JSON.stringify(body));
			return [r.statusCode, r.response, { 'Content-Type': 'application/json' }];
		});
	}
	function interceptRekor() {
		nock(REKOR_URL).post(rekorHandler.path).reply(async (_, body) => {
			const r = await rekorHandler.fn(typeof body === 'string' ? body : JSON.stringify(body));
			return [r.statusCode, r.response, { 'Content-Type': 'application/json' }];
		});
	}

	write('rekor.pub', pubPem(rekorKP.publicKey));
	write('tsa-chain.pem', derToPem(tsa.intCertificate, 'CERTIFICATE') + derToPem(tsa.rootCertificate, 'CERTIFICATE'));
	write('fulcio-root.pem', derToPem(ca.rootCertificate, 'CERTIFICATE'));
	write('ctlog.pub', pubPem(ctKP.publicKey));
	const other = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
	write('other.pub', pubPem(other.publicKey));
	const otherFulcio = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
	const otherCA = await mock.initializeCA(otherFulcio);
	write('other-fulcio-root.pem', derToPem(otherCA.rootCertificate, 'CERTIFICATE'));

	const rekorDER = rekorKP.publicKey.export({ type: 'spki', format: 'der' });
	const ctDER = ctKP.publicKey.export({ type: 'spki', format: 'der' });
	const trust = (keys) => ({
		certificateAuthorities: [{ certChain: [X509Certificate.parse(ca.rootCertificate)], validFor: forever }],
		timestampAuthorities: [{ certChain: [X509Certificate.parse(Buffer.from(tsa.intCertificate)), X509Certificate.parse(Buffer.from(tsa.rootCertificate))], validFor: forever }],
		tlogs: [{ logID: crypto.createHash('sha256').update(rekorDER).digest(), baseURL: REKOR_URL, publicKey: rekorKP.publicKey, validFor: forever }],
		ctlogs: [{ logID: crypto.createHash('sha256').update(ctDER).digest(), baseURL: 'https://ctfe.airlock.test', publicKey: ctKP.publicKey, validFor: forever }],
		publicKey: (hint) => {
			const k = keys && keys[hint];
			if (!k) throw new Error(`no key for hint ${hint}`);
			return { publicKey: k, validFor: () => true };
		},
	});

	const payload = cosignPayload(digest, reference);
	write('payload.json', payload);
	const otherPayload = cosignPayload('sha256:' + '1'.repeat(64), reference);
	write('payload-other-digest.json', otherPayload);
	const statement = Buffer.from(JSON.stringify({
		_type: 'https://in-toto.io/Statement/v1',
		subject: [{ name: reference, digest: { sha256: digest.replace(/^sha256:/, '') } }],
		predicateType: 'https://sigstore.dev/cosign/sign/v1',
		predicate: {},
	}));
	write('statement.json', statement);
	// what `cosign sign` (v2.6 --new-bundle-format, v3 by default) signs:
	// protojson of an in-toto v1 statement whose one subject is the image's
	// digest without a name, annotations an empty struct (cosign
	// cmd/cosign/cli/sign/sign.go signDigestBundle)
	const cosignV3Statement = Buffer.from(JSON.stringify({
		_type: 'https://in-toto.io/Statement/v1',
		subject: [{ digest: { sha256: digest.replace(/^sha256:/, '') }, annotations: {} }],
		predicateType: 'https://sigstore.dev/cosign/sign/v1',
		predicate: {},
	}));
	write('statement-cosign-v3.json', cosignV3Statement);

	const cases = [];
	// peer verdict for a bundle file: @sigstore/verify with the same trust
	function peer(bundleJSON, artifact, opts) {
		try {
			const b = bundleFromJSON(bundleJSON);
			const v = new Verifier(trust(opts.keys), opts.verifierOptions || {});
			const policy = opts.subject ? {
				subjectAlternativeName: '^' + opts.subject.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') + '$',
				extensions: { issuer: opts.issuer },
			} : undefined;
			v.verify(toSignedEntity(b, artifact), policy);
			return 'ok';
		} catch (e) {
			return 'fail: ' + (e.code ? e.code + ' ' : '') + e.message;
		}
	}
	function addBundle(name, bundleJSON, artifactName, artifact, opts) {
		const file = write(`${name}.bundle.json`, JSON.stringify(bundleJSON));
		cases.push({
			name, bundle: file, artifact: artifactName,
			keys: opts.keyFiles || [], fulcio: opts.fulcio || [], rekor: opts.rekor || [], tsa: opts.tsa || [],
			issuer: opts.issuer, subject: opts.subject, require_tlog: !!opts.requireTlog,
			expect: opts.expect, peer_note: opts.peer_note, reason: opts.reason,
			peer: opts.nopeer ? undefined : peer(bundleJSON, artifact, opts),
		});
	}

	// ---- key-based: every key type, signature over the payload ----------
	const keyTypes = {
		ec256: { gen: ['ec', { namedCurve: 'prime256v1' }], algo: 'sha256' },
		// SHA-384 on P-384 is what sigstore's algorithm registry names, but
		// cosign and sigstore-js verify ECDSA with SHA-256 on every curve:
		// both refuse it, and so does airlock.
		ec384sha384: { gen: ['ec', { namedCurve: 'secp384r1' }], algo: 'sha384' },
		ec384: { gen: ['ec', { namedCurve: 'secp384r1' }], algo: 'sha256' },
		ed25519: { gen: ['ed25519'], algo: null },
		rsa2048: { gen: ['rsa', { modulusLength: 2048 }], algo: 'sha256' },
	};
	for (const [kt, spec] of Object.entries(keyTypes)) {
		const kp = crypto.generateKeyPairSync(...spec.gen);
		kp.algo = spec.algo;
		const pubFile = write(`key-${kt}.pub`, pubPem(kp.publicKey));
		const sig = crypto.sign(spec.algo, payload, kp.privateKey);
		// the tag-scheme form: payload layer + signature annotation
		const sigFile = write(`key-${kt}.sig`, sig.toString('base64'));
		const keys = { [kt]: kp.publicKey };
		const noTlog = { tlogThreshold: 0, timestampThreshold: 0 };
		const builder = new sign.MessageSignatureBundleBuilder({ signer: keySigner(kp, kt), witnesses: [] });
		const bundle = bundleToJSON(await builder.create({ data: payload }));
		const verdict = peer(bundle, payload, { keys, verifierOptions: noTlog });
		// sigstore-js hashes a message signature's artifact with the
		// messageDigest algorithm before verifying, which Ed25519 (pure)
		// cannot take: it refuses every Ed25519 message signature. cosign
		// verifies Ed25519 over the payload itself; so does airlock.
		const ed = kt === 'ed25519' ? { expect: 'ok', peer_note: 'sigstore-js prehashes Ed25519 message signatures' } : {};
		cases.push({ name: `key-${kt}`, sig: { payload: 'payload.json', signature: sigFile }, keys: [pubFile], fulcio: [], rekor: [], require_tlog: false, peer: verdict, ...ed });
		addBundle(`key-${kt}-bundle`, bundle, 'payload.json', payload, { keys, keyFiles: [pubFile], verifierOptions: noTlog, ...ed });
		// the same key over a DSSE envelope holding the payload
		const db = new sign.DSSEBundleBuilder({ signer: keySigner(kp, kt), witnesses: [] });
		const dbundle = bundleToJSON(await db.create({ data: payload, type: 'application/vnd.dev.cosign.simplesigning.v1+json' }));
		addBundle(`key-${kt}-dsse-bundle`, dbundle, null, null, { keys, keyFiles: [pubFile], verifierOptions: noTlog });
		if (kt === 'ec256') {
			cases.push({ name: 'key-wrong-key', sig: { payload: 'payload.json', signature: sigFile }, keys: ['other.pub'], fulcio: [], rekor: [], require_tlog: false,
				peer: peer(bundle, payload, { keys: { [kt]: other.publicKey }, verifierOptions: noTlog }) , reason: 'trusted keys' });
			addBundle('key-wrong-key-bundle', bundle, 'payload.json', payload, { keys: { [kt]: other.publicKey }, keyFiles: ['other.pub'], verifierOptions: noTlog , reason: 'trusted keys' });
			// the signature moved onto another payload (another image digest)
			cases.push({ name: 'key-other-payload', sig: { payload: 'payload-other-digest.json', signature: sigFile }, keys: [pubFile], fulcio: [], rekor: [], require_tlog: false,
				peer: peer(bundle, otherPayload, { keys, verifierOptions: noTlog }) , reason: 'trusted keys' });
			const tampered = JSON.parse(JSON.stringify(bundle));
			const s = Buffer.from(tampered.messageSignature.signature, 'base64');
			s[s.length - 3] ^= 1;
			tampered.messageSignature.signature = s.toString('base64');
			addBundle('key-tampered-signature-bundle', tampered, 'payload.json', payload, { keys, keyFiles: [pubFile], verifierOptions: noTlog , reason: 'trusted keys' });
			// key-based with Rekor (cosign sign --key, tlog upload on)
			interceptRekor();
			const b2 = new sign.MessageSignatureBundleBuilder({ signer: keySigner(kp, kt), witnesses: [new sign.RekorWitness({ rekorBaseURL: REKOR_URL })] });
			const tb = bundleToJSON(await b2.create({ data: payload }));
			addBundle('key-tlog-bundle', tb, 'payload.json', payload, { keys, keyFiles: [pubFile], rekor: ['rekor.pub'], requireTlog: true });
			const e = tb.verificationMaterial.tlogEntries[0];
			const ann = {
				SignedEntryTimestamp: e.inclusionPromise.signedEntryTimestamp,
				Payload: { body: e.canonicalizedBody, integratedTime: Number(e.integratedTime), logIndex: Number(e.logIndex), logID: Buffer.from(e.logId.keyId, 'base64').toString('hex') },
			};
			cases.push({ name: 'key-tlog', sig: { payload: 'payload.json', signature: write('key-tlog.sig', tb.messageSignature.signature), bundle: write('key-tlog.rekor.json', JSON.stringify(ann)) },
				keys: [pubFile], fulcio: [], rekor: ['rekor.pub'], require_tlog: true, peer: peer(tb, payload, { keys }) });
			const ann2 = JSON.parse(JSON.stringify(ann));
			ann2.Payload.integratedTime += 1;
			cases.push({ name: 'key-tlog-tampered-time', sig: { payload: 'payload.json', signature: 'key-tlog.sig', bundle: write('key-tlog-tampered.rekor.json', JSON.stringify(ann2)) }, reason: 'signed entry timestamp does not verify',
				keys: [pubFile], fulcio: [], rekor: ['rekor.pub'], require_tlog: true, peer: (() => { const t = JSON.parse(JSON.stringify(tb)); t.verificationMaterial.tlogEntries[0].integratedTime = String(ann2.Payload.integratedTime); return peer(t, payload, { keys }); })() });
			cases.push({ name: 'key-tlog-required-missing', sig: { payload: 'payload.json', signature: sigFile }, keys: [pubFile], fulcio: [], rekor: ['rekor.pub'], require_tlog: true,
				peer: peer(bundle, payload, { keys }) , reason: 'required' });
		}
	}

	// ---- keyless: Fulcio certificate + Rekor entry ----------------------
	async function keyless(name, artifact, artifactName, o) {
		intercept(o.ca || caHandler);
		interceptRekor();
		const token = jwt({ iss: o.issuer || ISSUER, sub: o.subject || SUBJECT, aud: 'sigstore' });
		const signer = new sign.FulcioSigner({ fulcioBaseURL: FULCIO_URL, identityProvider: { getToken: async () => token } });
		// "intoto" for DSSE: the mock log stores proposed entries as they
		// come, and only the intoto form carries its hashes when proposed.
		const witnesses = [new sign.RekorWitness({ rekorBaseURL: REKOR_URL, entryType: o.dsse ? 'intoto' : undefined })];
		if (o.tsa) {
			nock(TSA_URL).post(tsaHandler.path).reply(async (_, body) => {
				const r = await tsaHandler.fn(typeof body === 'string' ? body : JSON.stringify(body));
				return [r.statusCode, r.response, { 'Content-Type': r.contentType || 'application/timestamp-reply' }];
			});
			witnesses.push(new sign.TSAWitness({ tsaBaseURL: TSA_URL }));
		}
		const builder = o.dsse
			? new sign.DSSEBundleBuilder({ signer, witnesses, certificateChain: o.chain })
			: new sign.MessageSignatureBundleBuilder({ signer, witnesses });
		const b = bundleToJSON(await builder.create(o.dsse ? { data: artifact, type: o.dsse } : { data: artifact }));
		return b;
	}
	const kl = { fulcio: ['fulcio-root.pem'], rekor: ['rekor.pub'], issuer: ISSUER, subject: SUBJECT };
	const good = await keyless('keyless', payload, 'payload.json', {});
	addBundle('keyless-bundle', good, 'payload.json', payload, kl);
	const dsse = await keyless('keyless-dsse', statement, 'statement.json', { dsse: 'application/vnd.in-toto+json' });
	addBundle('keyless-dsse-bundle', dsse, null, null, kl);
	const cosignV3 = await keyless('keyless-cosign-v3', cosignV3Statement, 'statement-cosign-v3.json', { dsse: 'application/vnd.in-toto+json' });
	addBundle('keyless-cosign-v3-bundle', cosignV3, null, null, kl);
	const dsseChain = await keyless('keyless-dsse-chain', payload, 'payload.json', { dsse: 'application/vnd.dev.cosign.simplesigning.v1+json', chain: true });
	addBundle('keyless-dsse-simplesigning-bundle', dsseChain, null, null, kl);
	addBundle('keyless-other-subject-bundle', good, 'payload.json', payload, { ...kl, subject: OTHER_SUBJECT , reason: 'identity mismatch' });
	addBundle('keyless-other-issuer-bundle', good, 'payload.json', payload, { ...kl, issuer: OTHER_ISSUER , reason: 'issuer mismatch' });
	const mallory = await keyless('keyless-mallory', payload, 'payload.json', { subject: OTHER_SUBJECT, issuer: OTHER_ISSUER });
	addBundle('keyless-mallory-bundle', mallory, 'payload.json', payload, { ...kl, reason: 'identity mismatch' });
	addBundle('keyless-other-root-bundle', good, 'payload.json', payload, { ...kl, fulcio: ['other-fulcio-root.pem'], nopeer: true, expect: 'fail' , reason: 'Fulcio roots' });
	// a certificate that expired a day before the log saw it
	const expired = await keyless('keyless-expired', payload, 'payload.json', { ca: oldCAHandler });
	addBundle('keyless-expired-bundle', expired, 'payload.json', payload, { ...kl, reason: 'expired' });
	// no signed entry timestamp: an inclusion proof alone dates nothing
	const noSET = JSON.parse(JSON.stringify(good));
	delete noSET.verificationMaterial.tlogEntries[0].inclusionPromise;
	addBundle('keyless-no-set-bundle', noSET, 'payload.json', payload, { ...kl, reason: 'signed entry timestamp' });
	// tampered: body, SET, checkpoint, artifact
	const tBody = JSON.parse(JSON.stringify(good));
	const body = JSON.parse(Buffer.from(tBody.verificationMaterial.tlogEntries[0].canonicalizedBody, 'base64'));
	body.spec.data.hash.value = '0'.repeat(64);
	tBody.verificationMaterial.tlogEntries[0].canonicalizedBody = Buffer.from(JSON.stringify(body)).toString('base64');
	addBundle('keyless-tampered-body-bundle', tBody, 'payload.json', payload, { ...kl, reason: 'another artifact digest' });
	const tSet = JSON.parse(JSON.stringify(good));
	const set = Buffer.from(tSet.verificationMaterial.tlogEntries[0].inclusionPromise.signedEntryTimestamp, 'base64');
	set[set.length - 2] ^= 1;
	tSet.verificationMaterial.tlogEntries[0].inclusionPromise.signedEntryTimestamp = set.toString('base64');
	addBundle('keyless-tampered-set-bundle', tSet, 'payload.json', payload, { ...kl, reason: 'signed entry timestamp does not verify' });
	const tCp = JSON.parse(JSON.stringify(good));
	const cp = tCp.verificationMaterial.tlogEntries[0].inclusionProof.checkpoint;
	cp.envelope = cp.envelope.replace(/\n1\n/, '\n2\n');
	addBundle('keyless-tampered-checkpoint-bundle', tCp, 'payload.json', payload, { ...kl, reason: 'checkpoint' });
	write('payload-tampered.json', Buffer.concat([payload.subarray(0, payload.length - 1), Buffer.from(' }')]));
	addBundle('keyless-tampered-artifact-bundle', good, 'payload-tampered.json', fs.readFileSync(path.join(outdir, 'payload-tampered.json')), { ...kl, reason: 'messageDigest' });
	const tMedia = JSON.parse(JSON.stringify(good));
	tMedia.mediaType = 'application/vnd.dev.sigstore.bundle.v9.9+json';
	addBundle('keyless-unknown-version-bundle', tMedia, 'payload.json', payload, { ...kl, nopeer: true, expect: 'fail' , reason: 'not supported' });

	// an RFC 3161 timestamp instead of the SET dates the certificate
	const tsaKl = { ...kl, tsa: ['tsa-chain.pem'] };
	const withTsa = await keyless('keyless-tsa', payload, 'payload.json', { tsa: true });
	delete withTsa.verificationMaterial.tlogEntries[0].inclusionPromise;
	addBundle('keyless-tsa-bundle', withTsa, 'payload.json', payload, tsaKl);
	// genTime "...05.05Z": DER drops the fraction's trailing zeros
	// (X.690 11.7.3), which airlock reads and @sigstore/core refuses.
	tsaMs = 50;
	const shortFrac = await keyless('keyless-tsa-fraction', payload, 'payload.json', { tsa: true });
	tsaMs = null;
	delete shortFrac.verificationMaterial.tlogEntries[0].inclusionPromise;
	addBundle('keyless-tsa-fraction-bundle', shortFrac, 'payload.json', payload,
		{ ...tsaKl, expect: 'ok', peer_note: '@sigstore/core parses only three-digit fractions of GeneralizedTime' });
	addBundle('keyless-tsa-untrusted-bundle', withTsa, 'payload.json', payload, { ...kl, reason: 'nothing proves when', nopeer: true, expect: 'fail' });
	const tTsa = JSON.parse(JSON.stringify(withTsa));
	const tok = Buffer.from(tTsa.verificationMaterial.timestampVerificationData.rfc3161Timestamps[0].signedTimestamp, 'base64');
	tok[tok.length - 5] ^= 1;
	tTsa.verificationMaterial.timestampVerificationData.rfc3161Timestamps[0].signedTimestamp = tok.toString('base64');
	addBundle('keyless-tsa-tampered-bundle', tTsa, 'payload.json', payload, { ...tsaKl, reason: 'timestamp' });
	// a genuine token, but over another signature (moved between bundles)
	const moved = JSON.parse(JSON.stringify(noSET));
	moved.verificationMaterial.timestampVerificationData = withTsa.verificationMaterial.timestampVerificationData;
	addBundle('keyless-tsa-other-signature-bundle', moved, 'payload.json', payload, { ...tsaKl, reason: 'timestamp 1' });

	// the tag-scheme form of the keyless signature (cosign sign, annotations)
	const leaf = good.verificationMaterial.x509CertificateChain
		? good.verificationMaterial.x509CertificateChain.certificates[0].rawBytes
		: good.verificationMaterial.certificate.rawBytes;
	const e = good.verificationMaterial.tlogEntries[0];
	const ann = {
		SignedEntryTimestamp: e.inclusionPromise.signedEntryTimestamp,
		Payload: { body: e.canonicalizedBody, integratedTime: Number(e.integratedTime), logIndex: Number(e.logIndex), logID: Buffer.from(e.logId.keyId, 'base64').toString('hex') },
	};
	const klSig = {
		payload: 'payload.json',
		signature: write('keyless.sig', good.messageSignature.signature),
		certificate: write('keyless.crt', derToPem(Buffer.from(leaf, 'base64'), 'CERTIFICATE')),
		chain: 'fulcio-root.pem',
		bundle: write('keyless.rekor.json', JSON.stringify(ann)),
	};
	cases.push({ name: 'keyless-sig', sig: klSig, keys: [], ...kl, require_tlog: false, peer: peer(good, payload, kl) });
	cases.push({ name: 'keyless-sig-other-subject', sig: klSig, keys: [], ...kl, subject: OTHER_SUBJECT, require_tlog: false, peer: peer(good, payload, { ...kl, subject: OTHER_SUBJECT }) , reason: 'identity mismatch' });
	cases.push({ name: 'keyless-sig-no-bundle', sig: { ...klSig, bundle: undefined }, keys: [], ...kl, require_tlog: false, peer: peer(noSET, payload, kl) , reason: 'signed entry timestamp' });

	write('cases.json', JSON.stringify(cases, null, 1));
	for (const c of cases)
		console.log(`${c.name}: ${c.peer || c.expect}`);
}

main().catch((e) => {
	console.error(e);
	process.exit(1);
});
