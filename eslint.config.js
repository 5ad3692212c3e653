// typescript-eslint's type-checked rules over every TypeScript file the project compiles
// (tsconfig.json). What is turned off or set differently is listed, with why, in docs/testing.md.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", ".tools/", ".scratch/", ".cache/", "tools/", "**/*.js", "**/*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `const { a: _a, ...rest } = o` leaves a field out of a copy; a leading _ marks what is unused on purpose.
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          destructuredArrayIgnorePattern: "^_",
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // Test doubles implement async interfaces (a KubeClient, a sink, a handler) with `async` so that
    // a throw becomes a rejection, as it does in the real thing.
    files: ["**/*.test.ts", "test/**/*.ts"],
    rules: { "@typescript-eslint/require-await": "off" },
  },
);
