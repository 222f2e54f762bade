// GraphiQL's fetcher, told which operation runs from the document being sent
// (api/graphiql.py loads this after GraphiQL and before the page's own script).
//
// @graphiql/toolkit sends an operation over the websocket only when the
// editor's last parse (taken 100 ms after the last keystroke) has a
// subscription named exactly as the request's operationName. Run right after
// an edit, or with a stale operation name, a subscription went as a plain
// POST and was refused (406). Here the document is parsed as sent.
(function () {
  "use strict";
  const { parse, getOperationAST } = window.GraphiQL.GraphQL;
  const createFetcher = window.GraphiQL.createFetcher;

  window.GraphiQL.createFetcher = function (options) {
    const fetcher = createFetcher(options);
    return function (params, fetcherOptions) {
      let documentAST;
      try {
        documentAST = parse(params.query);
      } catch {
        return fetcher(params, fetcherOptions); // the server says what is wrong
      }
      const named = params.operationName || undefined;
      // The named operation; or the only one, when the name is stale or missing.
      const operation = getOperationAST(documentAST, named) || getOperationAST(documentAST);
      if (operation === null) return fetcher(params, fetcherOptions);
      const operationName = operation.name ? operation.name.value : undefined;
      return fetcher({ ...params, operationName }, { ...fetcherOptions, documentAST });
    };
  };
})();
