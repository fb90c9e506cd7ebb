/** Stylesheets are bundled by vite, imported for their effect. */
declare module '*.css';
