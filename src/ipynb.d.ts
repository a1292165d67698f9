// esbuild bundles a notebook as its text (the `.ipynb` loader of esbuild.mjs).
declare module '*.ipynb' {
  const text: string;
  export default text;
}
