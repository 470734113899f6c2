import type { Address } from '../schemas/common.js';

/**
 * The Across SpokePool of each EVM chain, as deployed: `broadcast/deployed-addresses.json` of
 * across-protocol/contracts (package 5.0.17, commit 8ab073067de0c9cd4a5a560885815c80c31abf6a),
 * mainnets and testnets alike. A route's `targets.bridge` comes from the same service as the
 * batch, so it is checked against this table, never trusted on its own.
 */
export const ACROSS_SPOKE_POOLS: Readonly<Record<number, Address>> = Object.freeze({
  1: '0x5c7BCd6E7De5423a257D81B442095A1a6ced35C5', // Mainnet
  10: '0x6f26Bf09B1C792e3228e5467807a900A503c0281', // Optimism
  56: '0x4e8E101924eDE233C13e2D8622DC8aED2872d505', // BNB Smart Chain
  130: '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64', // Unichain
  137: '0x9295ee1d8C5b022Be115A2AD3c30C72E34e7F096', // Polygon
  143: '0xd2ecb3afe598b746F8123CaE365a598DA831A449', // Monad
  232: '0xb234cA484866c811d0e6D3318866F583781ED045', // Lens
  288: '0xBbc6009fEfFc27ce705322832Cb2068F8C1e0A58', // Boba
  324: '0xE0B015E54d54fc84a6cB9B666099c46adE9335FF', // zkSync
  480: '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64', // World Chain
  919: '0xbd886FC0725Cc459b55BbFEb3E4278610331f83b', // Mode Sepolia
  999: '0x35E63eA3eb0fb7A3bc543C71FB66412e1F6B0E04', // HyperEVM
  1135: '0x9552a0a6624A23B848060AE5901659CDDa1f83f8', // Lisk
  1301: '0x6999526e507Cc3b03b180BbE05E1Ff938259A874', // Unichain Sepolia
  1868: '0x3baD7AD0728f9917d1Bf08af5782dCbD516cDd96', // Soneium
  4202: '0xeF684C38F94F48775959ECf2012D7E864ffb9dd4', // Lisk Sepolia
  4217: '0x2d4710F04Da90184255782d3715224A6C776955D', // Tempo
  4326: '0x3Db06DA8F0a24A525f314eeC954fC5c6a973d40E', // MegaETH
  8453: '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64', // Base
  9745: '0x50039fAEfebef707cFD94D6d462fE6D10B39207a', // Plasma
  34443: '0x3baD7AD0728f9917d1Bf08af5782dCbD516cDd96', // Mode
  37111: '0x6A0a7f39530923911832Dd60667CE5da5449967B', // Lens Sepolia
  42161: '0xe35e9842fceaCA96570B734083f4a58e8F7C5f2A', // Arbitrum One
  43114: '0xE0DB08B3F72931Dca2Ed7323a1053EaC42715bEe', // Avalanche
  57073: '0xeF684C38F94F48775959ECf2012D7E864ffb9dd4', // Ink
  59144: '0x7E63A5f1a8F0B4d0934B2f2327DAED3F6bb2ee75', // Linea
  80002: '0xd08baaE74D6d2eAb1F3320B2E1a53eeb391ce8e5', // Polygon Amoy
  81457: '0x2D509190Ed0172ba588407D4c2df918F955Cc6E1', // Blast
  84532: '0x82B564983aE7274c86695917BBf8C99ECb6F0F8F', // Base Sepolia
  129399: '0x09aea4b2242abC8bb4BB78D537A67a245A7bEC64', // Tatara
  421614: '0x7E63A5f1a8F0B4d0934B2f2327DAED3F6bb2ee75', // Arbitrum Sepolia
  534352: '0x3baD7AD0728f9917d1Bf08af5782dCbD516cDd96', // Scroll
  808813: '0x3baD7AD0728f9917d1Bf08af5782dCbD516cDd96', // BOB Sepolia
  7777777: '0x13fDac9F9b4777705db45291bbFF3c972c6d1d97', // Zora
  11155111: '0x5ef6C01E11889d86803e0B23e3cB3F9E9d97B662', // Sepolia
  11155420: '0x4e8E101924eDE233C13e2D8622DC8aED2872d505', // Optimism Sepolia
  168587773: '0x5545092553Cf5Bf786e87a87192E902D50D8f022', // Blast Sepolia
});

/** One well-known token on one chain. */
export interface KnownToken {
  chainId: number;
  address: Address;
  /** The symbol the summary shows. */
  symbol: string;
  decimals: number;
  /** Other symbols a route may give it, e.g. `USDC` for bridged `USDC.e`. */
  also?: readonly string[];
}

type Row = readonly [symbol: string, decimals: number, address: Address, also?: string];

/**
 * USDC (native and bridged), USDT, WETH, DAI and WBTC on the chains of `ACROSS_SPOKE_POOLS`:
 * `src/tokens.ts` (`TOKEN_SYMBOLS_MAP`) of across-protocol/constants (package 3.1.123, commit
 * da28763a6f66d8f703395714f8f6bb892f16eda7). Across's `USDC-BNB` and `USDT-BNB` are BNB Chain's
 * 18-decimal USDC and USDT, listed here under the symbols a route gives them.
 */
const ROWS: Readonly<Record<number, readonly Row[]>> = {
  // Mainnet
  1: [
    ['USDC', 6, '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48'],
    ['USDT', 6, '0xdAC17F958D2ee523a2206206994597C13D831ec7'],
    ['WETH', 18, '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2', 'ETH'],
    ['DAI', 18, '0x6B175474E89094C44Da98b954EedeAC495271d0F'],
    ['WBTC', 8, '0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599'],
  ],
  // Optimism
  10: [
    ['USDC', 6, '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85'],
    ['USDC.e', 6, '0x7F5c764cBc14f9669B88837ca1490cCa17c31607', 'USDC'],
    ['USDT', 6, '0x94b008aA00579c1307B0EF2c499aD98a8ce58e58'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
    ['DAI', 18, '0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1'],
    ['WBTC', 8, '0x68f180fcCe6836688e9084f035309E29Bf0A2095'],
  ],
  // BNB Smart Chain
  56: [
    ['USDC', 18, '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d'],
    ['USDT', 18, '0x55d398326f99059fF775485246999027B3197955'],
    ['WETH', 18, '0x2170Ed0880ac9A755fd29B2688956BD959F933F8', 'ETH'],
  ],
  // Unichain
  130: [
    ['USDC', 6, '0x078D782b760474a361dDA0AF3839290b0EF57AD6'],
    ['USDT', 6, '0x9151434b16b9763660705744891fA906F660EcC5'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
    ['WBTC', 8, '0x0555E30da8f98308EdB960aa94C0Db47230d2B9c'],
  ],
  // Polygon
  137: [
    ['USDC', 6, '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359'],
    ['USDC.e', 6, '0x2791Bca1f2de4661ED88A30C99A7a9449Aa84174', 'USDC'],
    ['USDT', 6, '0xc2132D05D31c914a87C6611C10748AEb04B58e8F'],
    ['WETH', 18, '0x7ceB23fD6bC0adD59E62ac25578270cFf1b9f619', 'ETH'],
    ['DAI', 18, '0x8f3Cf7ad23Cd3CaDbD9735AFf958023239c6A063'],
    ['WBTC', 8, '0x1BFD67037B42Cf73acF2047067bd4F2C47D9BfD6'],
  ],
  // Monad
  143: [
    ['USDC', 6, '0x754704Bc059F8C67012fEd69BC8A327a5aafb603'],
    ['USDT', 6, '0xe7cd86e13AC4309349F30B3435a9d337750fC82D'],
    ['WBTC', 8, '0x0555E30da8f98308EdB960aa94C0Db47230d2B9c'],
  ],
  // Lens
  232: [
    ['USDC', 6, '0x88F08E304EC4f90D644Cec3Fb69b8aD414acf884'],
    ['WETH', 18, '0xE5ecd226b3032910CEaa43ba92EE8232f8237553', 'ETH'],
  ],
  // Boba
  288: [
    ['USDC.e', 6, '0x66a2A913e447d6b4BF33EFbec43aAeF87890FBbc', 'USDC'],
    ['USDT', 6, '0x5DE1677344D3Cb0D7D465c10b72A8f60699C062d'],
    ['WETH', 18, '0xDeadDeAddeAddEAddeadDEaDDEAdDeaDDeAD0000', 'ETH'],
    ['DAI', 18, '0xf74195Bb8a5cf652411867c5C2C5b8C2a402be35'],
    ['WBTC', 8, '0xdc0486f8bf31DF57a952bcd3c1d3e166e3d9eC8b'],
  ],
  // zkSync
  324: [
    ['USDC.e', 6, '0x3355df6D4c9C3035724Fd0e3914dE96A5a83aaf4', 'USDC'],
    ['USDT', 6, '0x493257fD37EDB34451f62EDf8D2a0C418852bA4C'],
    ['WETH', 18, '0x5AEa5775959fBC2557Cc8789bC1bf90A239D9a91', 'ETH'],
    ['DAI', 18, '0x4B9eb6c0b6ea15176BBF62841C6B2A8a398cb656'],
    ['WBTC', 8, '0xBBeB516fb02a01611cBBE0453Fe3c580D7281011'],
  ],
  // World Chain
  480: [
    ['USDC', 6, '0x79A02482A880bCE3F13e09Da970dC34db4CD24d1'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
    ['WBTC', 8, '0x03C7054BCB39f7b2e5B2c7AcB37583e32D70Cfa3'],
  ],
  // Mode Sepolia
  919: [['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH']],
  // HyperEVM
  999: [
    ['USDC', 6, '0xb88339CB7199b77E23DB6E890353E22632Ba630f'],
    ['USDT', 6, '0xB8CE59FC3717ada4C02eaDF9682A9e934F625ebb'],
  ],
  // Lisk
  1135: [
    ['USDC.e', 6, '0xF242275d3a6527d877f2c927a82D9b057609cc71', 'USDC'],
    ['USDT', 6, '0x05D032ac25d322df992303dCa074EE7392C117b9'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
    ['WBTC', 8, '0x03C7054BCB39f7b2e5B2c7AcB37583e32D70Cfa3'],
  ],
  // Unichain Sepolia
  1301: [
    ['USDC', 6, '0x31d0220469e10c4E71834a79b1f276d740d3768F'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
  ],
  // Soneium
  1868: [
    ['USDC.e', 6, '0xbA9986D2381edf1DA03B0B9c1f8b00dc4AacC369', 'USDC'],
    ['USDT', 6, '0x3A337a6adA9d885b6Ad95ec48F9b75f197b5AE35'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
  ],
  // Lisk Sepolia
  4202: [['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH']],
  // Tempo
  4217: [['USDC.e', 6, '0x20C000000000000000000000b9537d11c60E8b50', 'USDC']],
  // MegaETH
  4326: [
    ['USDT', 6, '0xB8CE59FC3717ada4C02eaDF9682A9e934F625ebb'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
  ],
  // Base
  8453: [
    ['USDC', 6, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'],
    ['USDbC', 6, '0xd9aAEc86B65D86f6A7B5B1b0c42FFA531710b6CA', 'USDC'],
    ['USDT', 6, '0xfde4C96c8593536E31F229EA8f37b2ADa2699bb2'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
    ['DAI', 18, '0x50c5725949A6F0c72E6C4a641F24049A917DB0Cb'],
  ],
  // Plasma
  9745: [
    ['USDT', 6, '0xB8CE59FC3717ada4C02eaDF9682A9e934F625ebb'],
    ['WETH', 18, '0x9895D81bB462A195b4922ED7De0e3ACD007c32CB', 'ETH'],
  ],
  // Mode
  34443: [
    ['USDC.e', 6, '0xd988097fb8612cc24eeC14542bC03424c656005f', 'USDC'],
    ['USDT', 6, '0xf0F161fDA2712DB8b566946122a5af183995e2eD'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
    ['WBTC', 8, '0xcDd475325D6F564d27247D1DddBb0DAc6fA0a5CF'],
  ],
  // Lens Sepolia
  37111: [['WETH', 18, '0xaA91D645D7a6C1aeaa5988e0547267B77d33fe16', 'ETH']],
  // Arbitrum One
  42161: [
    ['USDC', 6, '0xaf88d065e77c8cC2239327C5EDb3A432268e5831'],
    ['USDC.e', 6, '0xFF970A61A04b1cA14834A43f5dE4533eBDDB5CC8', 'USDC'],
    ['USDT', 6, '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9'],
    ['WETH', 18, '0x82aF49447D8a07e3bd95BD0d56f35241523fBab1', 'ETH'],
    ['DAI', 18, '0xDA10009cBd5D07dd0CeCc66161FC93D7c9000da1'],
    ['WBTC', 8, '0x2f2a2543B76A4166549F7aaB2e75Bef0aefC5B0f'],
  ],
  // Avalanche
  43114: [
    ['USDC', 6, '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E'],
    ['USDT', 6, '0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7'],
  ],
  // Ink
  57073: [
    ['USDC', 6, '0x2D270e6886d130D724215A266106e6832161EAEd'],
    ['USDT', 6, '0x0200C29006150606B650577BBE7B6248F58470c1'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
  ],
  // Linea
  59144: [
    ['USDC', 6, '0x176211869cA2b568f2A7D4EE941E073a821EE1ff'],
    ['USDT', 6, '0xA219439258ca9da29E9Cc4cE5596924745e12B93'],
    ['WETH', 18, '0xe5D7C2a44FfDDf6b295A15c148167daaAf5Cf34f', 'ETH'],
    ['DAI', 18, '0x4AF15ec2A0BD43Db75dd04E62FAA3B8EF36b00d5'],
    ['WBTC', 8, '0x3aAB2285ddcDdaD8edf438C1bAB47e1a9D05a9b4'],
  ],
  // Polygon Amoy
  80002: [
    ['USDC', 6, '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582'],
    ['WETH', 18, '0x52eF3d68BaB452a294342DC3e5f464d7f610f72E', 'ETH'],
  ],
  // Blast
  81457: [
    ['WETH', 18, '0x4300000000000000000000000000000000000004', 'ETH'],
    ['WBTC', 8, '0xF7bc58b8D8f97ADC129cfC4c9f45Ce3C0E1D2692'],
  ],
  // Base Sepolia
  84532: [
    ['USDC', 6, '0x036CbD53842c5426634e7929541eC2318f3dCF7e'],
    ['USDbC', 6, '0xE634Ec56B73779eCFfa78109a653FA0aE33D243f', 'USDC'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
  ],
  // Arbitrum Sepolia
  421614: [
    ['USDC', 6, '0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d'],
    ['WETH', 18, '0x980B62Da83eFf3D4576C647993b0c1D7faf17c73', 'ETH'],
  ],
  // Scroll
  534352: [
    ['USDC', 6, '0x06eFdBFf2a14a7c8E15944D1F4A48F9F95F663A4'],
    ['USDT', 6, '0xf55BEC9cafDbE8730f096Aa55dad6D22d44099Df'],
    ['WETH', 18, '0x5300000000000000000000000000000000000004', 'ETH'],
    ['WBTC', 8, '0x3C1BCa5a656e69edCD0D4E36BEbb3FcDAcA60Cf1'],
  ],
  // BOB Sepolia
  808813: [
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
    ['WBTC', 8, '0xAdCE1AB74C8e64c155953A8BdE37cBB06Cf7086D'],
  ],
  // Zora
  7777777: [
    ['USDzC', 6, '0xCccCCccc7021b32EBb4e8C08314bD62F7c653EC4', 'USDC'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
  ],
  // Sepolia
  11155111: [
    ['USDC', 6, '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238'],
    ['USDT', 6, '0x7169D38820dfd117C3FA1f22a697dBA58d90BA06'],
    ['WETH', 18, '0xfFf9976782d46CC05630D1f6eBAb18b2324d6B14', 'ETH'],
    ['WBTC', 8, '0x9D15Db83680572C9a48826d51b733ea3B0957De3'],
  ],
  // Optimism Sepolia
  11155420: [
    ['USDC', 6, '0x5fd84259d66Cd46123540766Be93DFE6D43130D7'],
    ['USDC.e', 6, '0x9552a0a6624A23B848060AE5901659CDDa1f83f8', 'USDC'],
    ['WETH', 18, '0x4200000000000000000000000000000000000006', 'ETH'],
  ],
  // Blast Sepolia
  168587773: [['WETH', 18, '0x4200000000000000000000000000000000000023', 'ETH']],
};

/**
 * Well-known tokens per chain, that a route must agree with: a route that gives a listed symbol
 * an address not listed for it on that chain, or a listed address other decimals, is refused.
 */
export const WELL_KNOWN_TOKENS: readonly KnownToken[] = Object.freeze(
  Object.entries(ROWS).flatMap(([chainId, rows]) =>
    rows.map(([symbol, decimals, address, also]) =>
      Object.freeze({
        chainId: Number(chainId),
        address,
        symbol,
        decimals,
        ...(also ? { also: Object.freeze([also]) } : {}),
      }),
    ),
  ),
);

/** Chain id → lowercase SpokePool addresses. */
export type BridgeIndex = ReadonlyMap<number, readonly string[]>;

/** The known tokens, looked up by `chainId:address` and by `chainId:SYMBOL` (lowercase address, uppercase symbol). */
export interface TokenIndex {
  byAddress: ReadonlyMap<string, KnownToken>;
  bySymbol: ReadonlyMap<string, ReadonlySet<string>>;
  /** Every symbol the table knows on some chain (keys of `symbolKey`). */
  symbols: ReadonlySet<string>;
}

/** The table with a partner's entries: a chain it names gets exactly the addresses it gives. */
export function bridgeIndex(extra?: ReadonlyMap<number, readonly string[]>): BridgeIndex {
  if (!extra && defaultBridges) return defaultBridges;
  const index = new Map<number, readonly string[]>();
  for (const [chainId, address] of Object.entries(ACROSS_SPOKE_POOLS))
    index.set(Number(chainId), [address.toLowerCase()]);
  for (const [chainId, addresses] of extra ?? [])
    index.set(
      chainId,
      addresses.map((address) => address.toLowerCase()),
    );
  if (!extra) defaultBridges = index;
  return index;
}
let defaultBridges: BridgeIndex | undefined;

const INVISIBLE = /[\p{Cf}\p{Z}\s]/gu;

/**
 * A symbol as a person reads it, for comparing: compatibility forms folded (full-width letters),
 * invisible and space characters dropped, upper case. A route could otherwise show "USDC" and
 * escape every rule about USDC.
 */
export function symbolKey(symbol: string): string {
  // Plain symbols (nearly all) skip the Unicode work: the verifier reads four per batch.
  if (PLAIN.test(symbol)) return symbol.toUpperCase();
  return symbol.normalize('NFKC').replace(INVISIBLE, '').toUpperCase();
}
const PLAIN = /^[A-Za-z0-9.]*$/;

/** The table with a partner's tokens; an entry for an address the table lists replaces it. */
export function tokenIndex(extra?: readonly KnownToken[]): TokenIndex {
  if (!extra && defaultTokens) return defaultTokens;
  const byAddress = new Map<string, KnownToken>();
  for (const token of [...WELL_KNOWN_TOKENS, ...(extra ?? [])])
    byAddress.set(`${token.chainId}:${token.address.toLowerCase()}`, token);
  const bySymbol = new Map<string, Set<string>>();
  const symbols = new Set<string>();
  for (const [key, token] of byAddress) {
    const address = key.slice(key.indexOf(':') + 1);
    for (const symbol of [token.symbol, ...(token.also ?? [])]) {
      const name = symbolKey(symbol);
      symbols.add(name);
      const key = `${token.chainId}:${name}`;
      let addresses = bySymbol.get(key);
      if (!addresses) bySymbol.set(key, (addresses = new Set()));
      addresses.add(address);
    }
  }
  const index = { byAddress, bySymbol, symbols };
  if (!extra) defaultTokens = index;
  return index;
}
let defaultTokens: TokenIndex | undefined;
