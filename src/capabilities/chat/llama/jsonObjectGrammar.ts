/**
 * GBNF for JSON mode: a single JSON object and nothing after it. Every whitespace run is bounded
 * (`ws` is at most a newline and 20 spaces/tabs, and never two `ws` in a row), so a model cannot
 * stall in whitespace until the token limit; once the closing brace is written the grammar
 * only admits an end-of-generation token.
 */
export const jsonObjectGrammar = String.raw`
root   ::= "{" ws ( member ( "," ws member )* )? "}"
member ::= string ":" ws value
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( member ( "," ws member )* )? "}" ws
array  ::= "[" ws ( value ( "," ws value )* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} ) )* "\"" ws
number ::= "-"? ( "0" | [1-9] [0-9]{0,15} ) ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )? ws
ws     ::= | " " | "\n" [ \t]{0,20}
`;
