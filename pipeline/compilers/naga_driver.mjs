// The webgpu target's translator process: naga (the naga-wasm package, naga compiled to WebAssembly)
// turns SPIR-V modules into WGSL, many modules per process (pipeline/compilers/wgsl.py starts it).
//
//   node naga_driver.mjs <naga-wasm entry: its dist/node.js>
//
// Framing on stdin and stdout, little-endian:
//   request:  u32 length, then that many bytes of a SPIR-V module
//   response: u8 status, u32 length, then that many bytes of UTF-8 text
//             status 0: the WGSL text; 1: naga's refusal ("parse", "validation" or "write", a tab, its
//             message); 2: naga failed inside (a trap of the WebAssembly module: the process then exits)
// The first response, before any request, is status 0 with the naga version the package carries.
// The process ends when its stdin ends.

import { pathToFileURL } from "node:url";

const naga = await import(pathToFileURL(process.argv[2]).href);

function send(status, text) {
    const body = Buffer.from(text, "utf8");
    const head = Buffer.alloc(5);
    head.writeUInt8(status, 0);
    head.writeUInt32LE(body.length, 1);
    process.stdout.write(Buffer.concat([head, body]));
}

function translate(spirv) {
    const module = naga.parseSpirv(spirv);
    try {
        const info = naga.validate(module);
        try {
            return naga.writeWgsl(module, info);
        } finally {
            info.free();
        }
    } finally {
        module.free();
    }
}

function answer(spirv) {
    try {
        send(0, translate(spirv));
    } catch (error) {
        if (error instanceof naga.NagaError) {
            send(1, `${error.kind}\t${error.formatted}`);
        } else {
            send(2, String(error && error.stack || error));
            process.exitCode = 2;
            process.stdin.destroy();
            return false;
        }
    }
    return true;
}

send(0, naga.nagaVersion);
let pending = Buffer.alloc(0);
process.stdin.on("data", (chunk) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 4) {
        const size = pending.readUInt32LE(0);
        if (pending.length < 4 + size) {
            break;
        }
        const spirv = new Uint8Array(pending.subarray(4, 4 + size));
        pending = pending.subarray(4 + size);
        if (!answer(spirv)) {
            return;
        }
    }
});
process.stdin.on("end", () => process.exit(process.exitCode ?? 0));
