import { keccak256, hexToBytes } from 'viem';
const data = hexToBytes('0x' + 'ab'.repeat(1188));
for (let r = 0; r < 3; r++) { const n = 20000; const t = performance.now(); for (let i = 0; i < n; i++) keccak256(data, 'bytes'); console.log('1188B', ((performance.now() - t) * 1000 / n).toFixed(2), 'us'); }
const small = hexToBytes('0x' + 'ab'.repeat(96));
for (let r = 0; r < 3; r++) { const n = 50000; const t = performance.now(); for (let i = 0; i < n; i++) keccak256(small, 'bytes'); console.log('96B', ((performance.now() - t) * 1000 / n).toFixed(2), 'us'); }
