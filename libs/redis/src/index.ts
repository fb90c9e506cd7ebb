export { connectFailFast } from './fail-fast';
