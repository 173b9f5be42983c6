-- Neovim as gotopy's language client (tests/cli/server.rs runs it headless): the setup
-- docs/editors.md gives (the file $GOTOPY_SETUP, copied from there), then the file $FILE
-- opened as a user opens it. It waits for the diagnostics, asks for the definition of the
-- first `goto .done`, the references of `label .done`, a hover, the outline, renames the
-- label and applies both quick fixes, and checks the answers against places it finds in
-- the buffer's own lines. Each check prints a line; a failure exits with status 1.

dofile(vim.env.GOTOPY_SETUP)

local function fail(message)
  io.stderr:write('neovim.lua: ' .. message .. '\n')
  vim.cmd('cquit 1')
end

local function check(what, ok, detail)
  if not ok then
    fail(what .. ': ' .. vim.inspect(detail))
  end
  io.stdout:write('ok ' .. what .. '\n')
end

vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.FILE))
local buf = vim.api.nvim_get_current_buf()
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)

-- The zero-based line and byte column of the `nth` occurrence of `text` in the buffer,
-- `shift` bytes on.
local function find(text, nth, shift)
  local seen = 0
  for number, line in ipairs(lines) do
    local from = 1
    while true do
      local at = line:find(text, from, true)
      if not at then
        break
      end
      seen = seen + 1
      if seen == nth then
        return { line = number - 1, character = at - 1 + (shift or 0) }
      end
      from = at + 1
    end
  end
  fail('no ' .. text .. ' number ' .. nth)
end

if not vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20) then
  fail('no diagnostics arrived; clients: ' .. #vim.lsp.get_clients({ bufnr = buf }))
end
local diagnostics = vim.diagnostic.get(buf)
local unused = find('label .unused', 1)
check('diagnostics', #diagnostics == 1 and diagnostics[1].code == 'G102'
  and diagnostics[1].lnum == unused.line and diagnostics[1].col == unused.character, diagnostics)

local client = vim.lsp.get_clients({ bufnr = buf, name = 'gotopy' })[1]
check('client', client ~= nil, vim.lsp.get_clients())

local function ask(method, position, extra)
  local params = vim.tbl_extend('force', {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
  }, position and { position = position } or {}, extra or {})
  local answer, err = client:request_sync(method, params, 10000, buf)
  if not answer or answer.err then
    fail(method .. ' failed: ' .. vim.inspect(err or answer))
  end
  return answer.result
end

local function at(location)
  return { location.range.start.line, location.range.start.character }
end

local label = find('label .done', 1, #'label .')
local definition = ask('textDocument/definition', find('goto .done', 1, #'goto .d'))
if definition[1] then
  definition = definition[1]
end
check('definition', vim.deep_equal(at(definition), { label.line, label.character }), definition)

local references = ask('textDocument/references', label, { context = { includeDeclaration = true } })
local got = vim.tbl_map(at, references)
table.sort(got, function(a, b) return a[1] < b[1] end)
local first, second = find('goto .done', 1, #'goto .'), find('goto .done', 2, #'goto .')
check('references', vim.deep_equal(got, {
  { first.line, first.character },
  { second.line, second.character },
  { label.line, label.character },
}), references)

-- Hover on the first goto names the lines of the `with` and the `for` it leaves.
local hover = ask('textDocument/hover', find('goto .done', 1))
local text = hover and hover.contents and hover.contents.value or ''
local with_line, for_line = find('with open', 1).line + 1, find('for item', 1).line + 1
check('hover', text:find('the `with` at line ' .. with_line, 1, true) ~= nil
  and text:find('the `for` at line ' .. for_line, 1, true) ~= nil, hover)

local outline = {}
for _, symbol in ipairs(ask('textDocument/documentSymbol', nil)) do
  outline[#outline + 1] = symbol.name .. ':' .. table.concat(
    vim.tbl_map(function(child) return child.name end, symbol.children or {}), ',')
end
check('outline', vim.deep_equal(outline, { 'walk:.done', 'plain:.unused' }), outline)

-- Rename the label, apply the edit, and count the new name.
local edit = ask('textDocument/rename', label, { newName = 'finished' })
vim.lsp.util.apply_workspace_edit(edit, client.offset_encoding)
local joined = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
local _, gotos = joined:gsub('goto %.finished', '')
local _, labels = joined:gsub('label %.finished', '')
check('rename', gotos == 2 and labels == 1 and not joined:find('.done', 1, true), joined)

-- The quick fixes: decorate `plain`, which turns its label into an unused one (G101), then
-- remove that label; no diagnostic is left.
local function fix(code)
  if not vim.wait(10000, function()
    local now = vim.diagnostic.get(buf)
    return #now == 1 and now[1].code == code
  end, 20) then
    fail('no lone ' .. code .. ': ' .. vim.inspect(vim.diagnostic.get(buf)))
  end
  local diagnostic = vim.diagnostic.get(buf)[1]
  local where = { line = diagnostic.lnum, character = diagnostic.col }
  local actions = ask('textDocument/codeAction', nil, {
    range = { start = where, ['end'] = where },
    context = { diagnostics = { diagnostic.user_data.lsp } },
  })
  check('quick fix for ' .. code, #actions == 1, actions)
  vim.lsp.util.apply_workspace_edit(actions[1].edit, client.offset_encoding)
end
fix('G102')
fix('G101')
if not vim.wait(10000, function() return #vim.diagnostic.get(buf) == 0 end, 20) then
  fail('diagnostics left: ' .. vim.inspect(vim.diagnostic.get(buf)))
end
lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
local plain = find('def plain', 1).line + 1
check('fixed', lines[plain - 1] == '@goto' and lines[plain + 1] == '    pass', lines)

vim.cmd('qall!')
