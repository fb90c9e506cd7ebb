export { anvilBinary, type LocalChain, type LocalChainOptions, startLocalChain } from './local-chain';
