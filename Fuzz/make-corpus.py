#!/usr/bin/env python3
"""Writes the seed corpora under Fuzz/Corpus/ (small, hand-picked inputs; see docs/development.md, "Fuzzing").

The seeds are committed; this script documents where each comes from and regenerates them (`python3
Fuzz/make-corpus.py`). The fuzzer adds nothing to these directories: runs work on copies or on .build-fuzz/corpus.
"""
import json
import os
import shutil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Corpus")


def nested_arrays(levels, inner=""):
    return "[" * levels + inner + "]" * levels


def nested_objects(levels):
    return '{"a":' * (levels - 1) + "{}" + "}" * (levels - 1)


JSON = {
    # Scalars and numbers.
    "null": "null", "true": "true", "false": "false", "zero": "0", "minus-zero": "-0", "one-point-zero": "1.0",
    "exp-overflow": "1e400", "exp-underflow": "-1e-400", "exp-huge": "1e99999999999999999999",
    "zero-exp-huge": "0e99999999999999999999", "uint64-max": "18446744073709551615",
    "uint64-max-plus-one": "18446744073709551616", "int64-min": "-9223372036854775808",
    "int64-min-minus-one": "-9223372036854775809", "spelled-integers": "[100,1e2,1E+2,100.0,10e1,1000e-1]",
    "fraction-zeros": "[0.000,-0.0e-0,0.1e1,1.50]",
    # Strings.
    "empty-string": '""', "escapes": r'"a\"b\\c\/d\b\f\n\r\t"', "unicode-escapes": r'"\u0041\u00e9\u0000\u001f"',
    "surrogate-pair": r'"\uD83C\uDF88"', "lone-high-surrogate": r'"\uD800x"', "lone-low-surrogate": r'"\uDC00"',
    "reversed-surrogates": r'"\uDC00\uD800"', "high-then-escape": r'"\uD800\u0041"', "raw-utf8": '"é🎈\u007f"',
    # Containers.
    "empty-array": "[]", "empty-object": "{}", "mixed": '[1,"x",{"k":[]},[[]],-0.0e-0,true,null]',
    "duplicate-keys": '{"a":1,"b":2,"a":[3]}', "pretty": '{\n  "a" : [\n    1,\n    2\n  ],\n  "b" : {}\n}\n',
    "whitespace": " \t\r\n[ 1 , { \"a\" : \"b c\" } ]\n",
    # The nesting limit: 256 levels are accepted, 257 are not.
    "arrays-255": nested_arrays(255), "arrays-256": nested_arrays(256), "arrays-257": nested_arrays(257),
    "objects-256": nested_objects(256), "objects-257": nested_objects(257),
    "arrays-256-deep-string": nested_arrays(256, '"[[[["'),
    # Truncated or broken.
    "truncated-array": "[1,2", "truncated-object": '{"a":', "truncated-string": '"abc',
    "truncated-escape": r'"\u12', "truncated-literal": "tru", "minus-alone": "-", "dot-no-digits": "1.",
    "exp-no-digits": "1e+", "leading-zero": "01", "trailing-comma": "[1,]", "two-values": "1 2",
    "bare-key": "{a:1}", "control-in-string": '"a\tb"',
}
JSON_BYTES = {
    "overlong-utf8": b'"\xc0\x80"', "encoded-surrogate": b'"\xed\xa0\x80"', "above-max-scalar": b'"\xf4\x90\x80\x80"',
    "truncated-utf8": b'"\xe2\x82', "bom": b"\xef\xbb\xbf[]", "nul": b"[\x00]",
}

CODABLE = {
    # Scene files as apps write them (the core tests' fixtures).
    "recipe": r'["Swift.Int","42","MyApp.Recipe","{\"applePie\":{}}"]',
    "emoji": r'["NavigationBackportApp.EmojiVisualisation","{\"emoji\":\"🎈\",\"count\":99}","Swift.Int","99"]',
    "generic": r'["Swift.Array<Swift.Int>","[1,2,3]","Swift.String","\"hello\""]',
    "recipe-pretty": '[\n  "Swift.Int",\n  "42",\n  "MyApp.Recipe",\n  "{\\"applePie\\":{}}"\n]',
    "slash-inner": r'["MyApp.Link","{\"url\":\"https:\\/\\/x\"}"]',
    "slash-both": r'["MyApp.Link","{\"url\":\"https:\\\/\\\/x\"}"]',
    "unicode-escapes": r'["MyApp.Place","{\"name\":\"Caf\\u00e9\"}","MyApp.City","\"Z\u00fcrich\""]',
    "non-ascii": '["MyApp.Place","{\\"name\\":\\"Café\\"}","MyApp.City","\\"Zürich\\""]',
    "numbers": r'["Swift.Double","1.0","Swift.Double","1e400","Swift.Double","-0","Swift.UInt64","18446744073709551616"]',
    "trailing-newline": '["Swift.Int","42"]\n',
    # Tags: what auto detection accepts, and spellings that must survive a write-back.
    "tag-underscore": r'["_Private.T","1"]', "tag-non-ascii": r'["Été.Saison","1"]',
    "tag-slash-escape": r'["My\/App.X","1","A.b","2"]', "tag-unicode-escape": r'["A.\u0062","1"]',
    "tag-lone-surrogate": r'["A.\uD800","1"]',
    "item-lone-surrogate": r'["A.b","\"\\uD800\""]',
    "item-nested-256": json.dumps(["A.b", nested_arrays(256)], separators=(",", ":")),
    "item-nested-257": json.dumps(["A.b", nested_arrays(257)], separators=(",", ":")),
}
ARRAY = {
    "recipe": '[{"applePie":{}},{"chocolateCake":{}}]', "ints": "[1,2,3]", "empty": "[]", "empty-spaced": "[ ]",
    "recipe-pretty": '[\n  {\n    "applePie" : {\n\n    }\n  },\n  {\n    "chocolateCake" : {\n\n    }\n  }\n]',
    "numbers": "[1.0,1e400,-0,18446744073709551616,-9223372036854775809]",
    "spaced": "[1, 2]", "strings-odd": r'["A.b","1","C.d"]', "strings-bad-item": r'["A.b","{"]',
    "strings-not-type-names": r'["ab","1"]', "strings-digit-tag": r'["1.a","1"]', "mixed": r'["A.b",1]',
    "nested-256": nested_arrays(256), "nested-257": nested_arrays(257),
}
OTHER = {"object": '{"a":1}', "string": '"x"', "truncated": '["Swift.Int","4', "not-json": "[1,]"}

GOOD_LINES = [
    '{"id":1,"op":"hello","client":"MyApp"}', '{"id":"a","op":"list"}', '{"op":"stats"}',
    '{"id":2,"op":"get","scene":"main"}',
    '{"id":3,"op":"set","scene":"main","path":[{"type":"Swift.Int","value":42},{"type":"MyApp.Recipe",'
    '"value":{"applePie":{}}}],"format":"codable","if_version":0}',
    '{"id":4,"op":"set","scene":"main","path":[{"value":1},{"value":[1.0,-0]}]}',
    '{"id":5,"op":"push","scene":"main","elements":[{"type":"Swift.String","value":"x"}],"if_version":3}',
    '{"id":6,"op":"pop","scene":"main","count":2}', '{"id":7,"op":"pop","scene":"main","to_root":true}',
    '{"id":8,"op":"delete","scene":"main","if_version":7}',
    '{"id":9,"op":"subscribe","scenes":["main*","a?"],"since":{"epoch":"e1","revision":41},"initial":false}',
    '{"id":10,"op":"unsubscribe","subscription":1}', '{"id":11,"op":"history","scene":"main","limit":10}',
    '{"id":12,"op":"sync"}', '{"id":13,"op":"phase","scene":"main","phase":"background"}',
    '{"id":14,"op":"snapshot"}', '{"id":15,"op":"reload"}', '{"id":1.5e3,"op":"list"}', '{"id":null,"op":"sync"}',
    '{"id":true,"op":"sync"}', '{ "op" : "hello" , "id" : "\\u0041" }\r',
]
BAD_LINES = [
    "", "   ", "null", "[]", '"hello"', "{", '{"id":1}', '{"id":[1],"op":"list"}', '{"id":{},"op":"list"}',
    '{"id":1,"op":1}', '{"id":1,"op":"nope"}', '{"id":1,"op":"get"}', '{"id":1,"op":"get","scene":"a.json"}',
    '{"id":1,"op":"get","scene":"-x"}', '{"id":1,"op":"get","scene":7}', '{"id":1,"op":"set","scene":"s"}',
    '{"id":1,"op":"set","scene":"s","path":{}}', '{"id":1,"op":"set","scene":"s","path":[1]}',
    '{"id":1,"op":"set","scene":"s","path":[{"type":""," value":1}]}',
    '{"id":1,"op":"set","scene":"s","path":[],"format":"yaml"}', '{"id":1,"op":"push","scene":"s"}',
    '{"id":1,"op":"pop","scene":"s","count":-1}', '{"id":1,"op":"pop","scene":"s","count":1,"to_root":true}',
    '{"id":1,"op":"pop","scene":"s","count":1e30}', '{"id":1,"op":"pop","scene":"s","to_root":"yes"}',
    '{"id":1,"op":"delete","scene":"s","if_version":1.5}', '{"id":1,"op":"subscribe","scenes":[]}',
    '{"id":1,"op":"subscribe","scenes":[""]}', '{"id":1,"op":"subscribe","since":{"epoch":1}}',
    '{"id":1,"op":"unsubscribe"}', '{"id":1,"op":"history","scene":"s","limit":18446744073709551616}',
    '{"id":1,"op":"phase","scene":"s","phase":"asleep"}', '{"id":1,"op":"hello","client":5}',
    '{"id":1,"op":"list"} trailing', '{"id":1,"op":"list"}\n{"id":2,"op":"list"}',
    '{"id":"\\uD800","op":"list","op":"nope"}', '{"id":1,"op":"get","scene":"' + "a" * 129 + '"}',
    nested_objects(256)[:-1] + ',"op":"list"}', '{"a":' + nested_arrays(256) + ',"id":1,"op":"list"}',
]
BAD_LINE_BYTES = {"invalid-utf8": b'{"id":1,"op":"\xff"}', "nul": b'{"id":1,"op":"list"}\x00'}


def write(directory, name, data):
    with open(os.path.join(directory, name), "wb") as file:
        file.write(data.encode() if isinstance(data, str) else data)


def main():
    for harness in ("json", "codec", "command"):
        shutil.rmtree(os.path.join(ROOT, harness), ignore_errors=True)
        os.makedirs(os.path.join(ROOT, harness))
    for name, text in JSON.items():
        write(os.path.join(ROOT, "json"), name + ".json", text)
    for name, data in JSON_BYTES.items():
        write(os.path.join(ROOT, "json"), name + ".json", data)
    for prefix, files in (("codable-", CODABLE), ("array-", ARRAY), ("other-", OTHER)):
        for name, text in files.items():
            write(os.path.join(ROOT, "codec"), prefix + name + ".json", text)
    for index, line in enumerate(GOOD_LINES):
        write(os.path.join(ROOT, "command"), "good-%02d.jsonl" % index, line)
    for index, line in enumerate(BAD_LINES):
        write(os.path.join(ROOT, "command"), "bad-%02d.jsonl" % index, line)
    for name, data in BAD_LINE_BYTES.items():
        write(os.path.join(ROOT, "command"), "bad-" + name + ".jsonl", data)


if __name__ == "__main__":
    main()
