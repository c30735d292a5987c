"""Agent card signing with the official Python SDK (a2a-sdk 1.x, `a2a.utils.signing`), as a
command-line peer for the interop tests. Run with .scratch/interop/py1/bin/python.

Usage:
  python py_signing.py sign CARD.json KEY.pem KID ALG [JKU]
  python py_signing.py verify CARD.json JWKS.json ALG[,ALG...]
  python py_signing.py canonical CARD.json

CARD.json is a v1.0 agent card in ProtoJSON (camelCase, as the a2a-rust server serves it). It
is parsed into the SDK's protobuf `AgentCard` with `json_format.ParseDict(...,
ignore_unknown_fields=True)`, so the SDK sees exactly what it would see after fetching the card.

sign       signs the card with `create_agent_card_signer`: the private key is KEY.pem (PKCS#8
           PEM; EC, RSA or Ed25519), the protected header {kid: KID, alg: ALG, typ: "JOSE"}
           plus jku: JKU when given. Prints the signed card (`MessageToDict`, the new signature
           appended to any already there) as one line of JSON on stdout.
verify     verifies the card's signatures with `create_signature_verifier`, allowing the
           comma-separated algorithms. The key provider looks the protected header's kid up in
           JWKS.json (a JWK Set) and returns it as a `jwt.PyJWK`; a JWK without "alg" gets
           PyJWT's default for its kty/crv, or the one allowed algorithm if only one is given.
           An unknown kid counts as an invalid signature. Prints one line:
           {"ok": true} or {"ok": false, "error": "<exception class>: <message>"}, and exits 0
           either way (a card that does not parse is reported the same way).
canonical  prints the SDK's canonical payload for the card (`_canonicalize_agent_card`, the
           bytes a signature covers), UTF-8, no trailing newline.

Exit codes: 0 done, 1 unreadable input file or signing failure, 2 bad usage. The SDK logs a
warning on stderr when the card lacks REQUIRED fields; stdout carries only the result.
"""

import json
import sys

import jwt
from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.types import AgentCard
from a2a.utils.signing import (
    _canonicalize_agent_card,
    create_agent_card_signer,
    create_signature_verifier,
)

USAGE = __doc__.split('\n\n')[1]


def usage(message=None):
    if message:
        print(f'py_signing.py: {message}', file=sys.stderr)
    print(USAGE, file=sys.stderr)
    sys.exit(2)


def out(text):
    """Writes text to stdout as UTF-8, whatever the locale."""
    sys.stdout.buffer.write(text.encode('utf-8'))
    sys.stdout.buffer.flush()


def read_json(path):
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def parse_card(card_json):
    return ParseDict(card_json, AgentCard(), ignore_unknown_fields=True)


def cmd_sign(card_path, key_path, kid, alg, jku=None):
    card = parse_card(read_json(card_path))
    with open(key_path, 'rb') as f:
        key = f.read()
    protected_header = {'kid': kid, 'alg': alg, 'typ': 'JOSE'}
    if jku is not None:
        protected_header['jku'] = jku
    signed = create_agent_card_signer(signing_key=key, protected_header=protected_header)(card)
    out(json.dumps(MessageToDict(signed), separators=(',', ':'), ensure_ascii=False) + '\n')


def cmd_verify(card_path, jwks_path, algs):
    card_json = read_json(card_path)
    jwks = read_json(jwks_path)
    algorithms = [a for a in algs.split(',') if a]
    if not algorithms:
        usage('no algorithms given')
    keys = jwks.get('keys', []) if isinstance(jwks, dict) else []

    def key_provider(kid, jku):
        for jwk in keys:
            if isinstance(jwk, dict) and jwk.get('kid') == kid:
                if 'alg' not in jwk and len(algorithms) == 1:
                    return jwt.PyJWK(jwk, algorithm=algorithms[0])
                return jwt.PyJWK(jwk)
        # A PyJWTError, so the verifier treats it as this signature failing.
        raise jwt.PyJWKError(f'no key with kid {kid!r} in {jwks_path}')

    try:
        create_signature_verifier(key_provider, algorithms)(parse_card(card_json))
        result = {'ok': True}
    except Exception as e:  # noqa: BLE001 - every failure is a result here
        result = {'ok': False, 'error': f'{type(e).__name__}: {e}'}
    out(json.dumps(result, ensure_ascii=False) + '\n')


def cmd_canonical(card_path):
    out(_canonicalize_agent_card(parse_card(read_json(card_path))))


def main(argv):
    if not argv:
        usage()
    cmd, args = argv[0], argv[1:]
    if cmd == 'sign' and len(args) in (4, 5):
        cmd_sign(*args)
    elif cmd == 'verify' and len(args) == 3:
        cmd_verify(*args)
    elif cmd == 'canonical' and len(args) == 1:
        cmd_canonical(*args)
    else:
        usage(f'bad arguments for {cmd!r}')


if __name__ == '__main__':
    main(sys.argv[1:])
