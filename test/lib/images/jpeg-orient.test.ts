import { describe, expect, it } from "vitest";
import { ImageStructureError } from "../../../src/lib/images/exif";
import { encodeBaselineJpeg, IDENTITY_ORDER, IDENTITY_SIGN } from "../../../src/lib/images/jpeg-encode";
import { type Orientation, orientJpeg, orientJpegInBands } from "../../../src/lib/images/jpeg-orient";
import { encodeJpeg } from "../../support/image-fixtures-jpeg";
import { decodeJpegCoefficients } from "../../support/jpeg-coefficients";

/*
 * Fixtures: written by libjpeg-turbo's cjpeg 2.1.5 from `pattern()` below (quality 90 unless the
 * name says otherwise; -progressive uses libjpeg's default script: spectral selection plus DC and
 * AC successive approximation; "restart" files carry DRI/RSTn). During development every fixture
 * and orientation was also checked against jpegtran -trim: identical coefficients and identical
 * djpeg pixels.
 */

const FIXTURES: Record<string, string> = {
  "420-48x32":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAgADADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD0BV079rrRcn7LpXxo0+35PywweJYY1/BUuFUewIH9z/UeBXGmXGm3k9neW8trd28jRTQToUkjdThlZTyCCCCD0xRplxcabeW95Zzy2t3byLLDPA5SSN1OVZWHIIIBBHTFfRqrp/7V+jgkW2l/GKwg6/LDB4jhRfwVLhVHsCB/c/1P5LVqrHKy/i/+lf8A23/pXrv/AGSlLIJd8K//ACl/9z/9N/4Ph+eIoq99iirxSfTbjTbye0u4JLW6gkaKaCZCjxupwysp5BBBBB6V7xFFX51mda1k/M/lz6R1msoa/wCn/wD7hCKKrkMNEMNXIoq+Nr1z+MUj47hhrT0y4udMvbe8s55bS7t5FlhngcpJE6nKsrDkEEAgjkEVBFFV2KKv9Yq9a90z93SPopV0/wDaz0bJ+y6V8ZLC35PywweJIUX8FS4VR7Agf3P9R9ZCFo3KMpV1OCpGCD6V+aum3Fxpt5b3dpPLa3UEiywzwuUeN1OVZWHIIIBBHSv1MATxHFk7Y9URfoJwP5N/np0/h3x7ypY3+zsNh6n7z986dN/a/hc0Yv8Am2cI2196Kd+WL+4yGvy+0lJdrv77P/N/8Ew0TFSUrqY2KspVlOCCMEGm1/AdWUuZxe59je5//9k=",
  "420-45x29":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAdAC0DASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwD0BV079rrRcn7LpXxo0+35PywweJYY1/BUuFUewIH9z/UeB3GmXGm3k9nd28trd28jRTW86FJI3U4ZWU8ggggg9MVHpmoPpt5b3lneNa3VvIssM8EuySN1OVZWByCCAQR0xX0dHJpf7WOkj57PTPjHYwdisUPiOFF/BUuFUewIH9z/AFP5lXweMxcW3Rkqi/utKSXy+L8/Xf8ArmGYYTJJqMa0ZYaTt8SbpN/PWm//ACT/AAfD4V4ch/4nmnf9fMf/AKEK9xhhryHQ9OntfF1lp00EkOoR3yW72joVlWUSBShQ8hgeMYznivf4vCOtf9Ai/wD/AAGf/CvynOqk8LKKxCcLrS+l/vP5T8fo/X8zwMsJ+8Spyvy+9b3utrmXDDVyOH5a1IfCWsj/AJhF9/4DP/hVtPCmrgc6TfD/ALdn/wAK+ErY6lf4196P5ZWX4v8A59S/8Bf+R8TQw1qaZcXGmXtveWc8tpd28iyw3EDlJI3U5VlYcgggEEcgioIYxV2JBX+teIrXumftKR9T+AtQ0b9pfxB4d1G9kttF+LGi3VtPPLtEcHiG2hdWY4AwtwiKeAOQP7n+p+lRA0blXUqynBUjBBr89/hQDH8TPCLKxVl1e0IYHBB85K/Sq5VdW0ZtRkUJdQsI3ZRxIOOSOx5/T6Y/gjx4ymGMxdCGGm1UpUZ1FF/C6cXeaT6OPxJPRq6TTST+7yOu405OS3aV/PoYYG0e9FFFfwvKTbPrT//Z",
  "420-progressive-45x29":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wgARCAAdAC0DASIAAhEBAxEB/8QAGgAAAQUBAAAAAAAAAAAAAAAABgACAwQHCP/EABcBAQEBAQAAAAAAAAAAAAAAAAcFBgj/2gAMAwEAAhADEAAAASABbo+YXAQ5ED/KFNWa1NCLMStMm612uqaVz30qCXaKSC6//8QAIBAAAgIBBQADAAAAAAAAAAAAAQMAAgQFBhARIxMUIf/aAAgBAQABBQLz3cmy7Lvjj3AgEAi2fHcFW7FIWa5YxHQYjp9VsAi7WXfAYncuR11yBBNK/NTt6p4//8QAKBEAAQIDBAsAAAAAAAAAAAAAAQMEAhARAAYiMRMUITJBUmFxkbHi/9oACAEDAQE/AQ4SZGgjBTPXd+fXbK/407lApYsJy28baurynxJjHSE1l//EACURAAEDAgMJAAAAAAAAAAAAAAEAAgMEMQYREhMhIjJBUXGR4f/aAAgBAgEBPwF8M0o5Dq8X+qtcYiNpuT5291I9Y8pBNKwRniawuy6aRf1dEr//xAAsEAACAAIGCAcAAAAAAAAAAAABAgADBAUREjFxECAhM0KSwvATMkFyc7HS/9oACAEBAAY/AuGVXUtchSQOrvIoylWU2FTiIl+4aiuj3WU2gg7RHBLrhBkKQP13kksgiYHu3fW22N0/LG6fljdPy6FdCVZTaGGIijzHKya2kspJwFIUdXeWrRPlX7jxD5hsz0//xAAiEAEAAgEDAwUAAAAAAAAAAAABABExECHwQZHhUWFxgaH/2gAIAQEAAT8hD8cDXYBypVUwWkMiTmHXX9mMwGU5DCMyH2eOdgHKkOaUyhsVXrPL08zQ8+0yQsVpDCMoULa0i/ADhN1SUnSY1hN5Gk3/AKwDBT2TV//aAAwDAQACAAMAAAAQDn52d8//xAAeEQEAAgEEAwAAAAAAAAAAAAABABExECFBYYHR4f/aAAgBAwEBPxAugqwVvndTYMizg7VcPrPUCKgZQvvjT//EAB4RAQACAgEFAAAAAAAAAAAAAAEAESExkUFhcYHh/9oACAECAQE/EGSgO4AevrzsIDcxeL5lnXklljEvgpbJZHo6BwlgiAos/8QAIhABAAIBAwMFAAAAAAAAAAAAAQARIRBh8DFBoSBRcYGx/9oACAEBAAE/ELI9UPgwI2EJqKomypDIiIj0qcm7PQAugAXlYDYiCJ0qAtrX6VCNhCSzQXihN5A4qrvE5P8AyD5fiHMhz9tBmPE2VgZEQRMiSrNDy6KCk2AyEhlSKUUjApvoEOFQEYGkYkUIEwMZTs58fFaf/9k=",
  "422-progressive-restart-45x29":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wgARCAAdAC0DASEAAhEBAxEB/8QAGQAAAgMBAAAAAAAAAAAAAAAAAwYEBwgA/8QAGQEAAwEBAQAAAAAAAAAAAAAABgcIBQED/90ABAAC/9oADAMBAAIQAxAAAAFgQRNySnkcUP8A/9BrMl1XV1jseqP/0Yr+q/cxh1Z//9JTlMrGteypxI//09BdK+5lg11hf//UFpUZ7B6etv8A/8QAIBAAAgIBBQADAAAAAAAAAAAAAQMAAgQFBhARIxMUIf/aAAgBAQABBQLz3cmy7Lv/AP/Qxx7gT//RAgE//9JbPjuCrdiv/9NCzXLGI6f/1BiOn1Wz/9UCLtZd/wD/1sBidy5HXU//1+P/0AIJ/9HSvzU7eqf/0uP/xAAtEQABAwEEBgsAAAAAAAAAAAABAAIEMQMQIZEFBhFhcoEHEhMUIyQ0QUJTsf/aAAgBAwEBPwGCeyLojvhThNMqcl0ieqj8J/V//9BS9IQ2uZJsrZpLagOGLTXKvJf/0devPSbF0TxAAdvVx99y7jK+p2RX/9IKCQWkr//Tu//UhYDbvu//xAArEQACAQMBAw0BAAAAAAAAAAABAgADBBEhEnGxBQYHEBMUIiMxQVFSYqH/2gAIAQIBAT8BuTtYqD34y5bWf//QdotjeYZHosAfydCJ/9HlBXtSBcDZz86cY9xS+wn/0qhzOkJHStQyPCAQDP/TJjmf/9Tnt59Xur+nZs+4pr/RkHf1f//EACsQAAIAAgcGBwAAAAAAAAAAAAECAAMEBRAREjFxITNCksLwEzJBcnOx0v/aAAgBAQAGPwLhlV1LXQUkDq70KMpVlNxU5iP/0JfuFn//0bP/0ldHwspvBB2iOCXXCDQUgfrvT//TSWQRMD4cPrffG6flj//U3T8sbp+WP//VhXQlWU3hhmI//9ajzHKya2kspJyFIUdXekf/17P/0LP/0aJ8q/ceIfMNmsf/0rP/xAAiEAEAAgEDAwUAAAAAAAAAAAABABExECHwQZHhUWFxgaH/2gAIAQEAAT8hD8cDXYBypVUwWkMiT//Q5h10/wD/0Z7M/9JmAynIYRmQ+zxzsA5U/wD/0w5pTKGxVes8vT//1PM0PPp//9WZIWK0hhGf/9ahQtrSL8AOE3VJSdJ//9fGn//QkJ//0d5Gk3/rAMFPZI//0tP/2gAMAwEAAgADAAAAECj/0OH/0Vj/0tT/08X/1M7/xAAgEQEAAgEDBQEAAAAAAAAAAAABABEhMUFREGFxgfCx/9oACAEDAQE/EGbZpnvd74L8OYZD/9AIzyqQKAADaqico3n/0RpQywjsW1PZh91+T//SwhicqXP/09YT/9TJOtD0/X0//8QAIREBAAIBBAEFAAAAAAAAAAAAAQARITFBYXFRgZHB0eH/2gAIAQIBAT8QoaLVwNffX1mJP//QgotF2gZAqlA5F5vaf//RZyxZVseTCzqWvmPuf//SEIweToBYh2DXNY0Z/9O5jT//1E7xJyqJ+CtsRn//xAAhEAEAAgEEAgMBAAAAAAAAAAABABEhEDFh8EGhUXGBsf/aAAgBAQABPxCyO6H0YEcCE1FUTZUhkRER2qf/0OzeGh//0dAf/9K6ABeVgNiIIm1QFxa/ioRwIS//01mgvFCbyBxVXeJ2f/J//9Qfb9Q5kO/xP//VgzHibKwMiIImRJ//1qs0PLooKTYDISGVIpRSM//XCnOn/9AIc//RKgIwNIxIoQJgYynhz6+q/9LT/9k=",
  "440-progressive-45x29":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wgARCAAdAC0DARIAAhEBAxEB/8QAGwAAAQUBAQAAAAAAAAAAAAAABAACBQYHAwj/xAAcAQACAgIDAAAAAAAAAAAAAAACBgQIAQMABQf/2gAMAwEAAhADEAAAAbBn67627RY50QrqQt8gu1WFkI2RZDRnEu9vXN74xapRVaV6EkaxsoKWtiQc/8QAIBAAAgIBBQADAAAAAAAAAAAAAQMAAgQFBhARIxMUIf/aAAgBAQABBQLz3cmy7Lvjj3AgEAi2fHcFW7FIWa5YxHQYjp9VsAi7WXfAYncuR11yBBNK/NTt6p4//8QAKBEAAAQCCgIDAAAAAAAAAAAAAQIDEQCRBAUQEhMUQVFSgSEiMWFi/9oACAEDAQE/ARSRR9qIsBPp3LLTpoJWqRDYdJYo7u5R707aK5WSPVlJKUwPcPr+RjLq8BlGXV4DKMurxGVqJhFQr7xiebpvm3//xAAkEQABAwIGAgMAAAAAAAAAAAABAAIDBBEFEiExUXEQgRMk8P/aAAgBAgEBPwE/M7SSMn1qpKSW2eMEjrX90pWShhcWm3SdO3lOnbyjO3lOenPusYjjjw+oOobkdcDixvbgqow36pr6R2aIGxvoRtuPY2JRd4//xAAsEAACAAIGCAcAAAAAAAAAAAABAgADBAUREjFxECAhM0KSwvATMkFyc7HS/9oACAEBAAY/AuGVXUtchSQOrvIoylWU2FTiIl+4aiuj3WU2gg7RHBLrhBkKQP13kksgiYHu3fW22N0/LG6fljdPy6FdCVZTaGGIijzHKya2kspJwFIUdXeWrRPlX7jxD5hsz0//xAAiEAEAAgEDAwUAAAAAAAAAAAABABExECHwQZHhUWFxgaH/2gAIAQEAAT8hD8cDXYBypVUwWkMiTmHXX9mMwGU5DCMyH2eOdgHKkOaUyhsVXrPL08zQ8+0yQsVpDCMoULa0i/ADhN1SUnSY1hN5Gk3/AKwDBT2TV//aAAwDAQACAAMAAAAQApTprnzO/8QAJBEBAAIBAgQHAAAAAAAAAAAAAQARIXHRMVGh8RBBYYGR4fD/2gAIAQMBAT8QSVXHEvzMub0MIKrABoBnzNHUxZpEAFVAAu1eU7o2h9o2ndm0qBUEBbSn36w4dXQ/vXx//8QAHREBAAICAwEBAAAAAAAAAAAAARExACFRgZEQYf/aAAgBAgEBPxAancyB3G+5xLCLFA6b7OD9AWZREXMV+5wfpnB+mSa+nxiI1gHaDN0hkQpNDY4jScE9oijRJGaIYRyc/8QAIhABAAIBAwMFAAAAAAAAAAAAAQARIRBh8DFBoSBRcYGx/9oACAEBAAE/ELI9UPgwI2EJqKomypDIiIj0qcm7PQAugAXlYDYiCJ0qAtrX6VCNhCSzQXihN5A4qrvE5P8AyD5fiHMhz9tBmPE2VgZEQRMiSrNDy6KCk2AyEhlSKUUjApvoEOFQEYGkYkUIEwMZTs58fFaf/9k=",
  "444-restart-48x32":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/2wBDAQMEBAUEBQkFBQkUDQsNFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBT/wAARCAAgADADAREAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/90ABAAG/9oADAMBAAIRAxEAPwD0BV079rrRcn7LpXxo0+35PywweJYY1/BUuFUewIH9z/UfAtxzWNlpWX3SX+f9bfD/AE/++4JrdZ5fN+bdFt/e4N/O/wDe/ieBXGmXGm3k9neW8trd28jRTQToUkjdThlZTyCCCCD0xXyFWTg3GSs0fqVKcKsI1KbTi1dNapp7NPqmTRRV505m6R77FFXxk5n+LSRdiirz5zLSLkMNefOZSR//0OC0y4uNNvLe8s55bW7t5FlhngcpJG6nKsrDkEEAgjpivxKVVwalF2aP7xnShVg6dSKcZKzT1TT3TXVM+jVXT/2r9HBIttL+MVhB1+WGDxHCi/gqXCqPYED+5/qfabhnkLK0cTFeiml+Ul/Wnw/mH77git1nl035uVCTf3uDfzv/AHv4nhU+m3Gm3k9pdwSWt1BI0U0EyFHjdThlZTyCCCCD0r4as5Qk4yVmt0fqlKpCrCNSnJSjJXTWqaezT6pnvEUVfFTmf4vpFyGGvPnMpIuRRV585lpH/9HyaGGv6inM+LSNPTLi50y9t7yznltLu3kWWGeBykkTqcqysOQQQCCOQRXmVnGcXCaunujRXTuj6QVdP/az0bJ+y6V8ZLC35PywweJIUX8FS4VR7Agf3P8AUfCtzyKdleWGk/Vwb/OL/rX4vS0xS7TX4/8AB/r0+shC0blGUq6nBUjBB9K/x3xEalCpKlVi4yi2mmrNNaNNPVNPdH65zJq6JkTFebOZm2SVxykQf//S8yiir+kpzPjki7FFXnzmWkaWm3Fxpt5b3dpPLa3UEiywzwuUeN1OVZWHIIIBBHSvNqyU04yV0y1dO6P1MATxHFk7Y9URfoJwP5N/np0/y5bw/iRh7Llp5tTj5RjiYxXySqpLyVl/J/C/UdcE+9N/+S/8D+t98h1MbFWUqynBBGCDX4VXp1KFSVGtFxnFtNNWaa0aaeqaejXQ9BNSV0NrlKP/2Q==",
  "gray-45x29":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/wAALCAAdAC0BAREA/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/9oACAEBAAA/APQFXTv2utFyfsulfGjT7fk/LDB4lhjX8FS4VR7Agf3P9R4HcaZcabeT2d3by2t3byNFNbzoUkjdThlZTyCCCCD0xWr4ch/4nmnf9fMf/oQr3GGGrsMNXI4flr5c0zUH028t7yzvGtbq3kWWGeCXZJG6nKsrA5BBAII6Yr6Ojk0v9rHSR89npnxjsYOxWKHxHCi/gqXCqPYED+5/qfHdD06e18XWWnTQSQ6hHfJbvaOhWVZRIFKFDyGB4xjOeK9/i8I61/0CL/8A8Bn/AMKuQ+EtZH/MIvv/AAGf/CraeFNXA50m+H/bs/8AhXxNDDWpplxcaZe295Zzy2l3byLLDcQOUkjdTlWVhyCCAQRyCK+rfAWoaN+0v4g8O6jeyW2i/FjRbq2nnl2iODxDbQurMcAYW4RFPAHIH9z/AFP0qIGjcq6lWU4KkYINTAbR70V+WEMYq7EgrtPhQDH8TPCLKxVl1e0IYHBB85K/Sq5VdW0ZtRkUJdQsI3ZRxIOOSOx5/T6Yw6K//9k=",
  "gray-progressive-45x29":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgMCAgMDAwMEAwMEBQgFBQQEBQoHBwYIDAoMDAsKCwsNDhIQDQ4RDgsLEBYQERMUFRUVDA8XGBYUGBIUFRT/wgALCAAdAC0BAREA/8QAGwAAAgIDAQAAAAAAAAAAAAAAAwYEBwACCAX/2gAIAQEAAAABYEGU8mNV1jpz+Y1JSrXsrfOWDe10rBz/xAAgEAACAgEFAAMAAAAAAAAAAAABAwACBAUGEBEjExQh/9oACAEBAAEFAvPdybLsu+OPcCAQCLZ8dwVbsUhZrljEdBiOn1WwCLtZd8Bidy5HXXIEE0r81O3qnj//xAAsEAACAAIGCAcAAAAAAAAAAAABAgADBAUREjFxECAhM0KSwvATMkFyc7HS/9oACAEBAAY/AuGVXUtchSQOrvIoylWU2FTiIl+4aiuj3WU2gg7RHBLrhBkKQP13kksgiYHu3fW22N0/LG6fljdPy6FdCVZTaGGIijzHKya2kspJwFIUdXeWrRPlX7jxD5hsz0//xAAiEAEAAgEDAwUAAAAAAAAAAAABABExECHwQZHhUWFxgaH/2gAIAQEAAT8hD8cDXYBypVUwWkMiTmHXX9mMwGU5DCMyH2eOdgHKkOaUyhsVXrPL08zQ8+0yQsVpDCMoULa0i/ADhN1SUnSY1hN5Gk3/AKwDBT2TV//aAAgBAQAAABAsbd//xAAiEAEAAgEDAwUAAAAAAAAAAAABABEhEGHwMUGhIFFxgbH/2gAIAQEAAT8Qsj1Q+DAjYQmoqibKkMiIiPSpybs9AC6ABeVgNiIInSoC2tfpUI2EJLNBeKE3kDiqu8Tk/wDIPl+IcyHP20GY8TZWBkRBEyJKs0PLooKTYDISGVIpRSMCm+gQ4VARgaRiRQgTAxlOznx8Vp//2Q==",
  "sof1-420-48x32":
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wCDEADIAIoAlgCvAJYAfQDIAK8AowCvAOEA1QDIAO4BLAH0AUUBLAETARMBLAJlAbYBzwFrAfQC1QJ+AvsC7gLJAn4CvAKwAyADhAR+A88DIANSBEADXwKwArwD6AVTA/UEQASkBMkFCAUUBQgDBwPDBYUF6QV4BOIF3AR+BO8FCATW/9sAgxEA1QDhAOEBLAEHASwCTAFFAUUCTATWAzkCvAM5BNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1gTWBNYE1v/BABEIACAAMAMBIgACEQEDEQH/xAAfAAABBQEBAQEBAQAAAAAAAAAAAQIDBAUGBwgJCgv/xAC1EAACAQMDAgQDBQUEBAAAAX0BAgMABBEFEiExQQYTUWEHInEUMoGRoQgjQrHBFVLR8CQzYnKCCQoWFxgZGiUmJygpKjQ1Njc4OTpDREVGR0hJSlNUVVZXWFlaY2RlZmdoaWpzdHV2d3h5eoOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4eLj5OXm5+jp6vHy8/T19vf4+fr/xAAfAQADAQEBAQEBAQEBAAAAAAAAAQIDBAUGBwgJCgv/xAC1EQACAQIEBAMEBwUEBAABAncAAQIDEQQFITEGEkFRB2FxEyIygQgUQpGhscEJIzNS8BVictEKFiQ04SXxFxgZGiYnKCkqNTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqCg4SFhoeIiYqSk5SVlpeYmZqio6Slpqeoqaqys7S1tre4ubrCw8TFxsfIycrS09TV1tfY2dri4+Tl5ufo6ery8/T19vf4+fr/2gAMAwEAAhEDEQA/AF+9/vfzptFO+99f50ixtOptOpEzCiilpEDKKKK1GO+9/vfzp9RVLUSGgooorMZ//9k=",
};

const fromBase64 = (s: string): Uint8Array => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const fixture = (name: string): Uint8Array => fromBase64(FIXTURES[name] ?? "");

/** The picture the fixtures were made from: four coloured quadrants, a gradient, a white diagonal. */
function pattern(w: number, h: number): Uint8Array {
  const px = new Uint8Array(w * h * 3);
  const bases = [
    [220, 40, 40],
    [40, 200, 60],
    [50, 70, 220],
    [230, 210, 50],
  ];
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const base = bases[(x < w / 2 ? 0 : 1) + (y < h / 2 ? 0 : 2)]!;
      const g = Math.round(((x + y) / (w + h)) * 60);
      const o = (y * w + x) * 3;
      px[o] = Math.min(255, base[0]! + g);
      px[o + 1] = Math.min(255, base[1]! + g);
      px[o + 2] = Math.max(0, base[2]! - g);
      if (Math.abs(x - y) < 2) px[o] = px[o + 1] = px[o + 2] = 255;
    }
  }
  return px;
}

interface Pixels {
  w: number;
  h: number;
  ch: number;
  px: Uint8Array;
}

const IDCT_COS: Float64Array = (() => {
  const t = new Float64Array(64);
  for (let x = 0; x < 8; x++) {
    for (let u = 0; u < 8; u++) t[x * 8 + u] = ((u === 0 ? Math.SQRT1_2 : 1) / 2) * Math.cos(((2 * x + 1) * u * Math.PI) / 16);
  }
  return t;
})();

/**
 * Reference pixel decoder for the tests: float inverse DCT (A.3.3), nearest-neighbour chroma
 * upsampling (which commutes with whole-MCU rotations, so results compare exactly), JFIF colour.
 */
function decodePixels(bytes: Uint8Array): Pixels {
  const d = decodeJpegCoefficients(bytes);
  const planes = d.components.map((c) => {
    const q = d.quantTables[c.tq]!;
    const pw = c.blocksWide * 8;
    const plane = new Float64Array(pw * c.blocksHigh * 8);
    const tmp = new Float64Array(64);
    for (let by = 0; by < c.blocksHigh; by++) {
      for (let bx = 0; bx < c.blocksWide; bx++) {
        const o = (by * c.blocksWide + bx) * 64;
        // rows: tmp[v][x] = sum_u C[x][u] F[v][u]
        for (let v = 0; v < 8; v++) {
          for (let x = 0; x < 8; x++) {
            let s = 0;
            for (let u = 0; u < 8; u++) s += IDCT_COS[x * 8 + u]! * c.coeffs[o + v * 8 + u]! * q[v * 8 + u]!;
            tmp[v * 8 + x] = s;
          }
        }
        for (let y = 0; y < 8; y++) {
          for (let x = 0; x < 8; x++) {
            let s = 0;
            for (let v = 0; v < 8; v++) s += IDCT_COS[y * 8 + v]! * tmp[v * 8 + x]!;
            plane[(by * 8 + y) * pw + bx * 8 + x] = s + 128;
          }
        }
      }
    }
    return { plane, pw, sx: c.h / d.hmax, sy: c.v / d.vmax };
  });
  const ch = planes.length === 1 ? 1 : 3;
  const px = new Uint8Array(d.width * d.height * ch);
  const clamp = (v: number): number => Math.max(0, Math.min(255, Math.round(v)));
  for (let y = 0; y < d.height; y++) {
    for (let x = 0; x < d.width; x++) {
      const s = planes.map((p) => p.plane[Math.floor(y * p.sy) * p.pw + Math.floor(x * p.sx)]!);
      const o = (y * d.width + x) * ch;
      if (ch === 1) px[o] = clamp(s[0]!);
      else {
        const [yy, cb, cr] = [s[0]!, s[1]! - 128, s[2]! - 128];
        px[o] = clamp(yy + 1.402 * cr);
        px[o + 1] = clamp(yy - 0.344136 * cb - 0.714136 * cr);
        px[o + 2] = clamp(yy + 1.772 * cb);
      }
    }
  }
  return { w: d.width, h: d.height, ch, px };
}

/** EXIF orientation applied to pixels, straight from the definitions: output (x, y) reads source (sx, sy). */
function orientPixels(src: Pixels, o: Orientation, w: number, h: number): Pixels {
  // w, h: the source region kept (after trimming), from the top-left corner.
  const swap = o >= 5;
  const ow = swap ? h : w;
  const oh = swap ? w : h;
  const px = new Uint8Array(ow * oh * src.ch);
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) {
      const [sx, sy] = {
        1: [x, y],
        2: [w - 1 - x, y], // mirrored horizontally
        3: [w - 1 - x, h - 1 - y], // rotated 180
        4: [x, h - 1 - y], // mirrored vertically
        5: [y, x], // transposed
        6: [y, h - 1 - x], // rotate 90 clockwise
        7: [w - 1 - y, h - 1 - x], // transverse
        8: [w - 1 - y, x], // rotate 90 counter-clockwise
      }[o] as [number, number];
      for (let c = 0; c < src.ch; c++) px[(y * ow + x) * src.ch + c] = src.px[(sy * src.w + sx) * src.ch + c]!;
    }
  }
  return { w: ow, h: oh, ch: src.ch, px };
}

function maxDiff(a: Pixels, b: Pixels): number {
  expect([a.w, a.h, a.ch]).toEqual([b.w, b.h, b.ch]);
  let m = 0;
  for (let i = 0; i < a.px.length; i++) m = Math.max(m, Math.abs(a.px[i]! - b.px[i]!));
  return m;
}

const sofMarker = (bytes: Uint8Array): number => {
  for (let i = 2; i + 1 < bytes.length; i++)
    if (bytes[i] === 0xff && bytes[i + 1]! >= 0xc0 && bytes[i + 1]! <= 0xcf && bytes[i + 1] !== 0xc4) return bytes[i + 1]!;
  return -1;
};

const ORIENTATIONS: Orientation[] = [1, 2, 3, 4, 5, 6, 7, 8];
let observedMax = 0;

describe("orientJpeg on libjpeg-made files", () => {
  it("the reference decoder reads the fixtures as the pattern they were made from", () => {
    for (const name of Object.keys(FIXTURES)) {
      if (name.startsWith("sof1")) continue; // quality 4: too coarse to resemble anything
      const img = decodePixels(fixture(name));
      const ref = pattern(img.w, img.h);
      let sum = 0;
      for (let i = 0, n = img.w * img.h; i < n; i++) {
        const luma = (r: number, g: number, b: number): number => 0.299 * r + 0.587 * g + 0.114 * b;
        const want = luma(ref[i * 3]!, ref[i * 3 + 1]!, ref[i * 3 + 2]!);
        const got = img.ch === 1 ? img.px[i]! : luma(img.px[i * 3]!, img.px[i * 3 + 1]!, img.px[i * 3 + 2]!);
        sum += Math.abs(want - got);
      }
      expect(sum / (img.w * img.h), name).toBeLessThan(4);
    }
  });

  for (const name of Object.keys(FIXTURES)) {
    it.each(ORIENTATIONS)(`${name}: orientation %i equals the decoded input transformed`, (o) => {
      const input = fixture(name);
      const src = decodeJpegCoefficients(input);
      const out = orientJpeg(input, o);
      const mcuW = 8 * src.hmax;
      const mcuH = 8 * src.vmax;
      // Trimming: only axes that are mirrored lose their partial last MCU.
      const mirrorX = [2, 3, 7, 8].includes(o);
      const mirrorY = [3, 4, 6, 7].includes(o);
      const w = mirrorX ? Math.floor(src.width / mcuW) * mcuW : src.width;
      const h = mirrorY ? Math.floor(src.height / mcuH) * mcuH : src.height;
      expect([out.width, out.height]).toEqual(o >= 5 ? [h, w] : [w, h]);
      expect(sofMarker(out.bytes)).toBe(name.startsWith("sof1") ? 0xc1 : 0xc0);
      const got = decodePixels(out.bytes);
      expect([got.w, got.h]).toEqual([out.width, out.height]);
      const diff = maxDiff(got, orientPixels(decodePixels(input), o, w, h));
      observedMax = Math.max(observedMax, diff);
      expect(diff).toBeLessThanOrEqual(1);
    });
  }

  it("turns the picture the right way: orientation 6 brings the bottom-left quadrant to the top-left", () => {
    const out6 = decodePixels(orientJpeg(fixture("420-48x32"), 6).bytes);
    const out8 = decodePixels(orientJpeg(fixture("420-48x32"), 8).bytes);
    const at = (p: Pixels, x: number, y: number): number[] => [...p.px.subarray((y * p.w + x) * 3, (y * p.w + x) * 3 + 3)];
    // Source quadrants: top-left red, top-right green, bottom-left blue, bottom-right yellow.
    const [r6, g6, b6] = at(out6, 4, 4);
    expect(b6! > r6! + 60 && b6! > g6! + 60).toBe(true); // blue
    const [r8, g8, b8] = at(out8, 4, 4);
    expect(g8! > r8! + 60 && g8! > b8! + 60).toBe(true); // green
    expect([out6.w, out6.h]).toEqual([32, 48]);
    console.log(`max channel difference against the transformed input: ${observedMax}`);
  });

  it("orientation 1 gives the same image as baseline with identical coefficients", () => {
    const input = fixture("420-progressive-45x29");
    const out = orientJpeg(input, 1);
    expect([out.width, out.height]).toEqual([45, 29]);
    expect(sofMarker(out.bytes)).toBe(0xc0);
    const a = decodeJpegCoefficients(input);
    const b = decodeJpegCoefficients(out.bytes);
    b.components.forEach((c, i) => expect(c.coeffs).toEqual(a.components[i]!.coeffs));
  });

  it("copies APPn segments in their order before the frame", () => {
    const input = fixture("420-48x32");
    const app1 = Uint8Array.of(0xff, 0xe1, 0, 8, 0x45, 0x78, 0x69, 0x66, 0, 0);
    const app2 = Uint8Array.of(0xff, 0xe2, 0, 5, 1, 2, 3);
    const patched = new Uint8Array(input.length + app1.length + app2.length);
    patched.set(input.subarray(0, 2));
    patched.set(app1, 2);
    patched.set(app2, 2 + app1.length);
    patched.set(input.subarray(2), 2 + app1.length + app2.length);
    const out = orientJpeg(patched, 3).bytes;
    const jfifLength = (input[4]! << 8) | input[5]!;
    expect([...out.subarray(0, 2 + app1.length + app2.length + 2 + jfifLength)]).toEqual([
      ...patched.subarray(0, 2 + app1.length + app2.length + 2 + jfifLength),
    ]);
    expect(out[2 + app1.length + app2.length + 2 + jfifLength]).toBe(0xff);
  });
});

describe("orientJpeg refuses what it cannot decode", () => {
  const base = (): Uint8Array => fixture("420-48x32");
  const sofAt = (b: Uint8Array): number => b.findIndex((x, i) => x === 0xff && b[i + 1] === 0xc0);
  const sosAt = (b: Uint8Array): number => b.findIndex((x, i) => x === 0xff && b[i + 1] === 0xda);

  it("a truncated scan", () => {
    const b = base();
    const cut = new Uint8Array(Math.floor(b.length * 0.6) + 2);
    cut.set(b.subarray(0, cut.length - 2));
    cut.set([0xff, 0xd9], cut.length - 2); // even with an EOI after the cut
    expect(() => orientJpeg(cut, 6)).toThrow(ImageStructureError);
    expect(() => orientJpeg(b.subarray(0, b.length - 40), 6)).toThrow(/truncated|EOI/);
  });

  it("an arithmetic-coded frame (SOF9)", () => {
    const b = base();
    b[sofAt(b) + 1] = 0xc9;
    expect(() => orientJpeg(b, 6)).toThrow(/arithmetic/);
  });

  it("12-bit precision, lossless and hierarchical frames", () => {
    const b = base();
    b[sofAt(b) + 4] = 12;
    expect(() => orientJpeg(b, 6)).toThrow(/12-bit/);
    const lossless = base();
    lossless[sofAt(lossless) + 1] = 0xc3;
    expect(() => orientJpeg(lossless, 2)).toThrow(/lossless/);
    const hier = base();
    hier[sofAt(hier) + 1] = 0xc5;
    expect(() => orientJpeg(hier, 2)).toThrow(/hierarchical/);
  });

  it("invalid Huffman data and non-JPEG input", () => {
    const b = base();
    const data = sosAt(b) + 2 + ((b[sosAt(b) + 2]! << 8) | b[sosAt(b) + 3]!);
    // All-ones bit strings are never a code in an optimal or standard table.
    for (let i = data; i + 1 < b.length - 2; i += 2) b.set([0xff, 0x00], i);
    expect(() => orientJpeg(b, 8)).toThrow(ImageStructureError);
    expect(() => orientJpeg(Uint8Array.of(0x89, 0x50, 0x4e, 0x47), 6)).toThrow(ImageStructureError);
  });
});

describe("orientJpeg band by band", () => {
  /** Random coefficients at any sampling, so that every band of every component carries data. */
  const synthetic = (w: number, h: number, sampling: [number, number][]): Uint8Array => {
    let seed = 11;
    const rand = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8) / 16777216;
    const hmax = Math.max(...sampling.map((f) => f[0]));
    const vmax = Math.max(...sampling.map((f) => f[1]));
    const components = sampling.map(([ch, cv], i) => {
      const bw = Math.ceil(w / (8 * hmax)) * ch;
      const bh = Math.ceil(h / (8 * vmax)) * cv;
      const coeffs = Int16Array.from({ length: bw * bh * 64 }, (_, k) =>
        k % 64 < 20 && rand() < 0.6 ? Math.round((rand() - 0.5) * 40) : 0,
      );
      return { id: i + 1, h: ch, v: cv, tq: 0, coeffs, blockOffset: (x: number, y: number) => (y * bw + x) * 64 };
    });
    const q = Uint16Array.from({ length: 64 }, (_, i) => 2 + (i & 7));
    return encodeBaselineJpeg({
      width: w,
      height: h,
      components,
      quantTables: [q],
      order: IDENTITY_ORDER,
      sign: IDENTITY_SIGN,
      segments: [],
    });
  };
  const px = pattern(203, 141);
  const rgb = (x: number, y: number): [number, number, number] => [
    px[(y * 203 + x) * 3]!,
    px[(y * 203 + x) * 3 + 1]!,
    px[(y * 203 + x) * 3 + 2]!,
  ];
  const inputs: Record<string, () => Uint8Array> = {
    ...Object.fromEntries(Object.keys(FIXTURES).map((name) => [name, () => fixture(name)])),
    "444-restart-203x141": () => encodeJpeg(203, 141, rgb, { restartInterval: 7 }),
    "444-progressive-203x141": () => encodeJpeg(203, 141, rgb, { progressive: true }),
    "420-synthetic-251x173": () =>
      synthetic(251, 173, [
        [2, 2],
        [1, 1],
        [1, 1],
      ]),
    "422-synthetic-251x173": () =>
      synthetic(251, 173, [
        [2, 1],
        [1, 1],
        [1, 1],
      ]),
    "gray-synthetic-251x173": () => synthetic(251, 173, [[1, 1]]),
  };

  it.each(ORIENTATIONS)("orientation %i: the same bytes whatever the band size", (o) => {
    for (const [name, make] of Object.entries(inputs)) {
      const input = make();
      const whole = orientJpeg(input, o).bytes;
      // 1 byte: one source MCU column (or row) per band; the others: a few MCUs per band.
      for (const bandBytes of [1, 2_000, 30_000])
        expect(orientJpegInBands(input, o, bandBytes).bytes, `${name} in ${bandBytes}-byte bands`).toEqual(whole);
    }
  });

  it("refuses broken data in bands as in one piece", () => {
    const b = fixture("420-progressive-45x29");
    const cut = new Uint8Array(Math.floor(b.length * 0.7) + 2);
    cut.set(b.subarray(0, cut.length - 2));
    cut.set([0xff, 0xd9], cut.length - 2);
    for (const o of [1, 3, 6, 8] as const) expect(() => orientJpegInBands(cut, o, 1)).toThrow(ImageStructureError);
  });
});
