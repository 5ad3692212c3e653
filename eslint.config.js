// typescript-eslint's type-checked rules over every TypeScript file the project compiles
// (tsconfig.json). Rules turned off or changed are listed, with why, in docs/testing.md.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/",
      "node_modules/",
      ".tools/",
      ".scratch/",
      ".cache/",
      "tools/",
      "test/fixtures/*.mjs",
      "**/*.js",
      "**/*.mjs",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
);
